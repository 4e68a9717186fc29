-- (0002 is reel likes and replies, written at the same time on another branch.)
-- Issue 17: social.reels is keyed by (page_id, id), so the table can be
-- distributed by Page (Citus): a distributed table's primary key and
-- unique constraints must contain its distribution column. Reel ids stay
-- unique through social.reel_id_seq.
--
-- reel/<id> names a reel by its id alone. reels_id keeps that lookup an
-- index scan; on a sharded cluster it is a query sent to every shard
-- (docs/SCALING.md, "Queries that cross Pages").
ALTER TABLE social.reels DROP CONSTRAINT reels_pkey;
ALTER TABLE social.reels ADD CONSTRAINT reels_pkey PRIMARY KEY (page_id, id);
CREATE INDEX reels_id ON social.reels (id);
