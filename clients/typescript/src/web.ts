/**
 * A `TableService` client for web pages (and any runtime with the Fetch API, Node 20 included):
 * gRPC-Web or the Connect protocol over HTTP/1.1 or later. The server speaks only gRPC, so these
 * calls go through hearts-gateway (deploy/gateway), which translates them and adds CORS.
 *
 * Kept apart from the main entry point so that programs that use only `@hearts/client/node` do
 * not load `@connectrpc/connect-web`, and pages do not load Node's gRPC transport.
 */
import { createClient } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcWebTransport,
  type GrpcWebTransportOptions,
} from "@connectrpc/connect-web";
import { TableService } from "./gen/hearts/v1/table_service_pb.js";
import type { TableServiceClient } from "./index.js";

/**
 * The wire protocol of a web client: `"grpc-web"` (binary Protobuf: the smallest messages) or
 * `"connect"` (JSON unless `useBinaryFormat` is set: readable in the browser's network panel).
 */
export type WebProtocol = "grpc-web" | "connect";

/** Transport options (interceptors, `fetch`, `defaultTimeoutMs`, ...) and the protocol. */
export interface WebClientOptions extends Omit<GrpcWebTransportOptions, "baseUrl"> {
  /** Default: `"grpc-web"`. */
  readonly protocol?: WebProtocol;
}

/**
 * A client of the gateway at `baseUrl` (for example `https://hearts.example`, or
 * `http://127.0.0.1:8080` for a local one). Seat tokens go in each call's `headers`, as with
 * the gRPC client: `client.playCard(request, { headers: bearer(seatToken) })`.
 */
export function createTableServiceWebClient(
  baseUrl: string,
  options: WebClientOptions = {},
): TableServiceClient {
  const { protocol = "grpc-web", ...transportOptions } = options;
  const transport =
    protocol === "connect"
      ? createConnectTransport({ ...transportOptions, baseUrl })
      : createGrpcWebTransport({ ...transportOptions, baseUrl });
  return createClient(TableService, transport);
}
