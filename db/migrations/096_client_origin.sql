-- Client-origin issues and alert rules that can leave them out.

-- True while every event of the issue was reported by a game client (relayed by the Roblox SDK,
-- tagged `origin:client`): what an exploiting player can make up. Any other event makes it false
-- for good. Existing issues are taken as server-origin, so their alerts go on as before.
alter table error_groups add column client_only boolean not null default false;

-- server_only: the rule leaves out client-only issues. min_players: the rule fires for an issue
-- only once that many distinct players have had it (its user_count); 0 means no minimum.
alter table alert_rules
  add column server_only boolean not null default false,
  add column min_players integer not null default 0 check (min_players between 0 and 1000000);
