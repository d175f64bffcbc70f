-- Client addresses each user has signed in from. The per-email ceiling on failed sign-ins does not
-- apply there, so failures sent from elsewhere cannot lock the owner out of the places they use.
create table login_known_addresses (
  user_id uuid not null references users (id) on delete cascade,
  address text not null,
  last_success_at timestamptz not null default now(),
  primary key (user_id, address)
);
create index login_known_addresses_seen on login_known_addresses (last_success_at);
