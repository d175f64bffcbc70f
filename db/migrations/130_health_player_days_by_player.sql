-- A player's days of a version are read by player: every write that changes them recomputes that
-- player's summary from all of them (db/health.ts summarizePlayers), for each player of a report and
-- for each session the silence job ends. With the day before the player in the key, that read could
-- only bound the version, so it visited every player day of the version (or of the project: on 30
-- days of 100,000 players a day it read 3.1 million rows, seconds for each report with session ends
-- and for each server the silence job declared lost). With the player before the day it reads that
-- player's few days. Same columns, so the writes' conflict target is unchanged; retention deletes by
-- the day index.
alter table health_player_days drop constraint health_player_days_pkey;
alter table health_player_days add primary key (project_id, place_version, environment, user_id, day);
