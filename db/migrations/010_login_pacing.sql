-- Failed sign-ins are paced per (email, address): the time of the last counted attempt decides how
-- long the next one must wait.
alter table rate_limits add column last_at timestamptz;
