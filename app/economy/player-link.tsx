import { Link } from "@remix-run/react";

/** The names a player row of the economy reads carries (snapshot names, possibly none). */
export type NamedPlayer = { user_id: string; username: string | null; display_name: string | null; display_names: string[] };

/** The name a person knows the player by: display name, username, else the first character name. */
export const playerName = (p: Omit<NamedPlayer, "user_id">) => p.display_name ?? p.username ?? p.display_names[0] ?? "—";

/** A link to the player's economy page, with the user id beside the name. */
export function PlayerLink({ base, player }: { base: string; player: NamedPlayer }) {
  return (
    <>
      <Link to={`${base}/players/${player.user_id}`}>{playerName(player)}</Link> <span className="muted small">{player.user_id}</span>
    </>
  );
}
