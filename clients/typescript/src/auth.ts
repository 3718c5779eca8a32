/** Sends seat and creator tokens the way the server expects them (docs/api.md, "Tokens"). */

/**
 * Call options headers that carry `token` as `authorization: Bearer <token>`. Pass them per call:
 * `client.playCard(request, { headers: bearer(seatToken) })`.
 */
export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}
