"""Where tables live: the Store interface, the in-memory and Redis stores, the fan-out hub."""
