-- The leasehold schema on PostgreSQL as it is today: written by `npm run schema:postgres`, not by hand.
-- :schema stands for the schema's name. Each object is described from the catalog.

-- table lh_receiver_lost
TABLE lh_receiver_lost (
  origin text NOT NULL
  at double precision NOT NULL
)
CONSTRAINT lh_receiver_lost_pkey PRIMARY KEY (origin)
CREATE UNIQUE INDEX lh_receiver_lost_pkey ON :schema.lh_receiver_lost USING btree (origin);

-- table lh_receiver_migrations
TABLE lh_receiver_migrations (
  version integer NOT NULL
  applied_at timestamp with time zone NOT NULL DEFAULT now()
)
CONSTRAINT lh_receiver_migrations_pkey PRIMARY KEY (version)
CREATE UNIQUE INDEX lh_receiver_migrations_pkey ON :schema.lh_receiver_migrations USING btree (version);

-- table lh_receiver_receipts
TABLE lh_receiver_receipts (
  origin text NOT NULL
  queue text NOT NULL
  counter bigint NOT NULL
  revision bigint NOT NULL
  refused boolean NOT NULL
  status smallint NOT NULL
  body text
  low_water bigint NOT NULL
  at double precision NOT NULL
)
CONSTRAINT lh_receiver_receipts_pkey PRIMARY KEY (origin, queue, counter)
CREATE UNIQUE INDEX lh_receiver_receipts_pkey ON :schema.lh_receiver_receipts USING btree (origin, queue, counter);
