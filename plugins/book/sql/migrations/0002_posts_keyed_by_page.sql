-- Issue 17: book.posts is keyed by (page_id, id), so the table can be
-- distributed by Page (Citus): a distributed table's primary key and
-- unique constraints must contain its distribution column. Post ids stay
-- unique through book.post_id_seq.
--
-- post/<id> names a post by its id alone. posts_id keeps that lookup an
-- index scan; on a sharded cluster it is a query sent to every shard
-- (docs/SCALING.md, "Queries that cross Pages").
ALTER TABLE book.posts DROP CONSTRAINT posts_pkey;
ALTER TABLE book.posts ADD CONSTRAINT posts_pkey PRIMARY KEY (page_id, id);
CREATE INDEX posts_id ON book.posts (id);

-- The new primary key orders a Page's posts by id in both directions, which
-- is what posts_page_id did.
DROP INDEX book.posts_page_id;
