-- The player page marks a player's anomalies on their balance lines: it reads the rises of one player
-- (economy_rises is otherwise indexed by the size of the rise only, across the project's players).
create index economy_rises_player on economy_rises (project_id, user_id, history_id);
