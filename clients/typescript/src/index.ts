/**
 * The TypeScript client of the Hearts API, `hearts.v1.TableService`.
 *
 * The messages, enums and the service descriptor are generated from proto/ by protoc-gen-es
 * (src/gen, do not edit; scripts/generate-typescript.sh). Pair `TableService` with any Connect
 * transport: `@hearts/client/node` makes a gRPC client for Node, and in a browser a gRPC-Web
 * transport works the same way. This entry point must never import a Node module, so that it
 * stays usable in browsers.
 */
export * from "./gen/hearts/v1/table_pb.js";
export * from "./gen/hearts/v1/table_event_pb.js";
export * from "./gen/hearts/v1/table_service_pb.js";
export * from "./gen/hearts/v1/error_details_pb.js";
export { type ErrorInfo, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
export { bearer } from "./auth.js";
export { formatCard, parseCard, sameCard } from "./cards.js";
export {
  Code,
  ConnectError,
  ERROR_DOMAIN,
  errorDetails,
  type HeartsErrorDetails,
} from "./errors.js";
