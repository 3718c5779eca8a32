/**
 * The TypeScript client of the Hearts API, `hearts.v1.TableService`.
 *
 * The messages, enums and the service descriptor are generated from proto/ by protoc-gen-es
 * (src/gen, do not edit; scripts/generate-typescript.sh). Pair `TableService` with any Connect
 * transport: `@hearts/client/node` makes a gRPC client for Node, and `@hearts/client/web` a
 * gRPC-Web or Connect client for browsers (through hearts-gateway). This entry point must never
 * import a Node module, so that it stays usable in browsers.
 */
import type { Client } from "@connectrpc/connect";
import type { TableService } from "./gen/hearts/v1/table_service_pb.js";

export * from "./gen/hearts/v1/table_pb.js";
export * from "./gen/hearts/v1/table_event_pb.js";
export * from "./gen/hearts/v1/table_service_pb.js";
export * from "./gen/hearts/v1/error_details_pb.js";
export { type ErrorInfo, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
export { bearer } from "./auth.js";
export { formatCard, parseCard, sameCard } from "./cards.js";
export { type WatchOptions, watchTableResumable } from "./watch.js";
export {
  Code,
  ConnectError,
  ERROR_DOMAIN,
  errorDetails,
  type HeartsErrorDetails,
} from "./errors.js";

/** A client of the Hearts table service, over any transport. */
export type TableServiceClient = Client<typeof TableService>;
