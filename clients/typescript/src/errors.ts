/**
 * Reads the error details the server attaches to a failed call (docs/api.md, "Errors").
 *
 * The server puts a `google.rpc.Status` in the `grpc-status-details-bin` trailer; Connect decodes
 * it into `ConnectError.details`, and `findDetails` picks out the messages of one type. This module
 * only reads: it never retries or maps reasons to anything else, because the reason string is the
 * contract (the same from the engine to the client).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { type ErrorInfo, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { type MoveRejection, MoveRejectionSchema } from "./gen/hearts/v1/error_details_pb.js";

/** The ErrorInfo domain of every error the Hearts server returns. */
export const ERROR_DOMAIN = "hearts.v1";

/** What a failed call says about itself. */
export interface HeartsErrorDetails {
  /** The status code, for example `Code.FailedPrecondition`. */
  readonly code: Code;
  /** The stable reason, for example `"MUST_FOLLOW_SUIT"`; undefined without a hearts.v1 ErrorInfo. */
  readonly reason: string | undefined;
  /** The hearts.v1 ErrorInfo (with `metadata.table` where one applies). */
  readonly errorInfo: ErrorInfo | undefined;
  /** Present when a PassCards or PlayCard move was refused: the reason and what is legal now. */
  readonly moveRejection: MoveRejection | undefined;
  /** The server's message, without the status code in front. */
  readonly message: string;
}

/**
 * The details of a failed call. Accepts anything a call may throw; errors that are not from the
 * wire (for example a refused connection) come back with their Connect code and no reason.
 */
export function errorDetails(error: unknown): HeartsErrorDetails {
  const connectError = ConnectError.from(error);
  const errorInfo = connectError
    .findDetails(ErrorInfoSchema)
    .find((info) => info.domain === ERROR_DOMAIN);
  return {
    code: connectError.code,
    reason: errorInfo?.reason,
    errorInfo,
    moveRejection: connectError.findDetails(MoveRejectionSchema)[0],
    message: connectError.rawMessage,
  };
}

export { Code, ConnectError };
