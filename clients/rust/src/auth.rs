use std::fmt;

use tonic::metadata::{AsciiMetadataValue, errors::InvalidMetadataValue};
use tonic::service::Interceptor;
use tonic::{Request, Status};

/// A seat or creator token, as the `authorization: Bearer <token>` metadata that every call acting
/// for a seat (or, for `DeleteTable`, for the creator) carries.
///
/// Put it on one request with [`request`](Self::request), or on every call of a client with
/// `TableServiceClient::with_interceptor(channel, token)`:
///
/// ```no_run
/// # async fn example(seat_token: &str) -> Result<(), Box<dyn std::error::Error>> {
/// use hearts_client::{BearerToken, TableServiceClient, v1::GetTableRequest};
///
/// let token = BearerToken::new(seat_token)?;
/// let channel = hearts_client::endpoint("127.0.0.1:50051")?.connect().await?;
/// let mut client = TableServiceClient::with_interceptor(channel, token);
/// let request = GetTableRequest { name: "tables/abc".into() };
/// let view = client.get_table(request).await?.into_inner().view;
/// println!("{view:?}");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct BearerToken(AsciiMetadataValue);

impl BearerToken {
    /// The metadata value for `token`; fails only if the token holds characters that metadata
    /// cannot carry (the server's tokens never do).
    pub fn new(token: &str) -> Result<Self, InvalidMetadataValue> {
        format!("Bearer {token}").parse().map(Self)
    }

    /// A request for `message` that carries the token.
    pub fn request<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        request.metadata_mut().insert("authorization", self.0.clone());
        request
    }
}

impl Interceptor for BearerToken {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        request.metadata_mut().insert("authorization", self.0.clone());
        Ok(request)
    }
}

/// Shows no part of the token, which is a credential.
impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_goes_in_the_authorization_metadata() {
        let token = BearerToken::new("v1.claims.signature").unwrap();
        let request = token.request(());
        assert_eq!(request.metadata().get("authorization").unwrap(), "Bearer v1.claims.signature");
        let mut intercepted = token.clone();
        let request = intercepted.call(Request::new(())).unwrap();
        assert_eq!(request.metadata().get("authorization").unwrap(), "Bearer v1.claims.signature");
    }

    #[test]
    fn debug_shows_no_token() {
        let token = BearerToken::new("secret").unwrap();
        assert!(!format!("{token:?}").contains("secret"));
    }

    #[test]
    fn a_token_metadata_cannot_carry_is_refused() {
        assert!(BearerToken::new("line\nbreak").is_err());
    }
}
