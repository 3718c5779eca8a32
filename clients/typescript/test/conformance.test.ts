/**
 * The conformance tests (conformance.ts) over gRPC, against a live Hearts server
 * (HEARTS_SERVER=host:port, as scripts/with-server.sh sets it).
 */
import { createTableServiceClient } from "@hearts/client/node";
import { conformanceTests } from "./conformance.js";

function serverAddress(): string {
  const address = process.env["HEARTS_SERVER"];
  if (!address) {
    throw new Error("HEARTS_SERVER is not set; run the test via scripts/with-server.sh");
  }
  return address;
}

conformanceTests("gRPC", () => createTableServiceClient(serverAddress()));
