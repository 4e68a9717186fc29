-- Issue 17: the chat app names a user's Page thread by its conversation id
-- alone (GetConversationByID), and the primary key (page_id, id) cannot
-- serve that lookup, which so far read the whole table. A plain index on id
-- makes it an index scan here, and on a cluster sharded by Page an index
-- scan on each shard (docs/SCALING.md, "Queries that cross Pages"). It is
-- not unique: ids are unique through the sequence, and a unique index
-- without page_id could not be enforced per shard.
CREATE INDEX conversations_id ON svcchat.conversations (id);
