use prost::Message;

use crate::v1::MoveRejection;

/// The `google.rpc.Status` details of a failed call, read from a [`tonic::Status`] (the
/// `grpc-status-details-bin` trailer).
///
/// Every error of the server carries a `google.rpc.ErrorInfo` with domain `hearts.v1` and a stable
/// reason such as `MUST_FOLLOW_SUIT`, `NOT_YOUR_TURN` or `TOKEN_INVALID`; a refused `PassCards`
/// or `PlayCard` also carries a [`MoveRejection`]. A status without details (one made by the
/// transport, say) gives `None`.
pub trait StatusDetails {
    /// The `google.rpc.ErrorInfo` detail.
    fn error_info(&self) -> Option<tonic_types::ErrorInfo>;

    /// The stable reason of the `ErrorInfo`, such as `"CARD_NOT_IN_HAND"`.
    fn reason(&self) -> Option<String> {
        self.error_info().map(|info| info.reason)
    }

    /// The `hearts.v1.MoveRejection` detail of a refused move: the reason and the caller's legal
    /// cards now.
    fn move_rejection(&self) -> Option<MoveRejection>;
}

impl StatusDetails for tonic::Status {
    fn error_info(&self) -> Option<tonic_types::ErrorInfo> {
        tonic_types::StatusExt::get_details_error_info(self)
    }

    fn move_rejection(&self) -> Option<MoveRejection> {
        let status = tonic_types::Status::decode(self.details()).ok()?;
        status.details.iter().find_map(|any| any.to_msg::<MoveRejection>().ok())
    }
}
