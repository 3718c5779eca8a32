/**
 * A ready-made `TableService` client for Node: gRPC over HTTP/2 (plaintext for `host:port`).
 *
 * Kept apart from the main entry point because it imports `@connectrpc/connect-node`, which needs
 * Node's http2 module.
 */
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, type GrpcTransportOptions } from "@connectrpc/connect-node";
import { TableService } from "./gen/hearts/v1/table_service_pb.js";
import type { TableServiceClient } from "./index.js";

export type { TableServiceClient };

/**
 * Keepalive pings on open calls (HTTP/2 PING; none on an idle connection), as the Python client
 * sends them: a connection that died silently (a dropped NAT entry, a sleeping laptop) would leave
 * a `watchTable` stream hanging forever. With a ping after 60 s without data and 20 s for its
 * answer, the stream fails with `Unavailable` within about 80 s instead, and can be resumed with
 * `afterSequence`. The server accepts a ping at most every 10 s (more often, it closes the
 * connection: `too_many_pings`), so `pingIntervalMs` must stay at least 10 000.
 */
export const KEEPALIVE_OPTIONS = { pingIntervalMs: 60_000, pingTimeoutMs: 20_000 } as const;

/**
 * A gRPC client for the server at `address`: `host:port` (plaintext HTTP/2, as a local server
 * listens) or a full URL such as `https://hearts.example:443`. Further transport options
 * (interceptors, TLS via `nodeOptions`, ...) are passed through, and override
 * `KEEPALIVE_OPTIONS` (`pingIntervalMs: Infinity` sends no pings).
 */
export function createTableServiceClient(
  address: string,
  options: Omit<GrpcTransportOptions, "baseUrl"> = {},
): TableServiceClient {
  const baseUrl = address.includes("://") ? address : `http://${address}`;
  return createClient(TableService, createGrpcTransport({ ...KEEPALIVE_OPTIONS, ...options, baseUrl }));
}
