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
 * A gRPC client for the server at `address`: `host:port` (plaintext HTTP/2, as a local server
 * listens) or a full URL such as `https://hearts.example:443`. Further transport options
 * (interceptors, TLS via `nodeOptions`, ...) are passed through.
 */
export function createTableServiceClient(
  address: string,
  options: Omit<GrpcTransportOptions, "baseUrl"> = {},
): TableServiceClient {
  const baseUrl = address.includes("://") ? address : `http://${address}`;
  return createClient(TableService, createGrpcTransport({ ...options, baseUrl }));
}
