-- Issue 15: every message updates its conversation's row (the counters, the
-- time of last activity). With updated_at in an index, each of those
-- updates wrote a new entry into all five of the table's indexes; without
-- it, PostgreSQL can update the row in place on its page (a HOT update),
-- which touches no index. Measured with the send's transaction in pgbench
-- (benchreport's send_tx script, one client, 3,000 transactions): 12 % less
-- WAL per send (2,920 -> 2,550 bytes) and 10-30 % more transactions per
-- second; through the whole platform at 8 connections the difference was
-- within this machine's noise. It also keeps a busy conversation's index
-- entries from piling up between vacuums.
--
-- The chat app's inbox (ListUserConversations) still orders a user's
-- conversations by updated_at: it now reads them by user and sorts them,
-- which is cheap for the handful of Pages one person writes to.
DROP INDEX svcchat.conversations_by_user;
CREATE INDEX conversations_by_user ON svcchat.conversations (user_id);
-- Room on each page for the new versions of its rows, so that an update
-- stays on its page while older versions wait to be pruned.
ALTER TABLE svcchat.conversations SET (fillfactor = 80);
