/**
 * The conformance tests (conformance.ts) as a web page would run them: over gRPC-Web (binary)
 * and the Connect protocol (JSON), with the Fetch API, through hearts-gateway
 * (HEARTS_GATEWAY=host:port, as deploy/gateway/with-gateway.sh sets it) to a live server.
 */
import { createTableServiceWebClient } from "@hearts/client/web";
import { conformanceTests } from "./conformance.js";

function gatewayUrl(): string {
  const address = process.env["HEARTS_GATEWAY"];
  if (!address) {
    throw new Error("HEARTS_GATEWAY is not set; run the test via deploy/gateway/with-gateway.sh");
  }
  return `http://${address}`;
}

conformanceTests("gRPC-Web", () => createTableServiceWebClient(gatewayUrl()));
conformanceTests("Connect JSON", () => createTableServiceWebClient(gatewayUrl(), { protocol: "connect" }));
