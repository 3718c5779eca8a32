/**
 * The conformance tests (conformance.ts) as a web page would run them: over gRPC-Web (binary)
 * and the Connect protocol (JSON), with the Fetch API, through hearts-gateway
 * (HEARTS_GATEWAY=host:port, as deploy/gateway/with-gateway.sh sets it) to a live server.
 */
import { after } from "node:test";
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

// The Fetch API's connection pool (Node's built-in undici) can keep a pooled keep-alive socket
// to the gateway referenced after the tests that make concurrent calls (QuickJoin's), which
// keeps Node from exiting when every test has passed (seen in about one run in five). Closing
// the pool once all tests are done lets the process end.
after(async () => {
  const pool = (globalThis as Record<symbol, { destroy(): Promise<void> } | undefined>)[
    Symbol.for("undici.globalDispatcher.1")
  ];
  await pool?.destroy();
});
