-- An account created with a temporary password (a teammate added by email, an operator reset) must
-- choose its own password at its first sign-in before it can do anything else.
alter table users add column must_change_password boolean not null default false;
