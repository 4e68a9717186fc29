-- name: LockConversationByUser :one
-- The conversation of a user with a Page, locked for the rest of the
-- transaction.
SELECT * FROM svcchat.conversations
WHERE page_id = @page_id AND user_id = @user_id
FOR UPDATE;

-- name: LockConversationOnly :exec
-- LockConversationByUser for a send decided beforehand (pipetx.RunOne),
-- which does not read the row: the same lock, no columns sent.
SELECT 1 FROM svcchat.conversations
WHERE page_id = @page_id AND user_id = @user_id
FOR UPDATE;

-- name: OpenConversation :one
-- A user's write: opens the conversation (holder as given) or reuses it,
-- and restarts the session window. The upsert locks the row.
INSERT INTO svcchat.conversations (page_id, user_id, holder, window_expires_at)
VALUES (@page_id, @user_id, @holder, now() + interval '24 hours')
ON CONFLICT (page_id, user_id) DO UPDATE
SET window_expires_at = now() + interval '24 hours', updated_at = now()
RETURNING *;

-- name: CreateConversation :one
-- A conversation the Page starts (a template to an opted-in user who never
-- wrote): no session window yet.
INSERT INTO svcchat.conversations (page_id, user_id, holder)
VALUES (@page_id, @user_id, @holder)
ON CONFLICT (page_id, user_id) DO NOTHING
RETURNING *;

-- name: SetControl :exec
UPDATE svcchat.conversations
SET holder = @holder, holder_app_id = @holder_app_id, previous_holder = @previous_holder, updated_at = now()
WHERE page_id = @page_id AND id = @id;

-- name: GetConversation :one
SELECT sqlc.embed(c), COALESCE(o.status, 'none')::text AS opt_in_status
FROM svcchat.conversations c
LEFT JOIN svcchat.opt_ins o ON o.page_id = c.page_id AND o.user_id = c.user_id
WHERE c.page_id = @page_id AND c.id = @id;

-- name: ListConversationsFirst :many
-- A Page's conversations, newest first; one more than asked tells whether
-- there is a next page.
SELECT sqlc.embed(c), COALESCE(o.status, 'none')::text AS opt_in_status
FROM svcchat.conversations c
LEFT JOIN svcchat.opt_ins o ON o.page_id = c.page_id AND o.user_id = c.user_id
WHERE c.page_id = @page_id
ORDER BY c.id DESC LIMIT @lim;

-- name: ListConversationsAfter :many
SELECT sqlc.embed(c), COALESCE(o.status, 'none')::text AS opt_in_status
FROM svcchat.conversations c
LEFT JOIN svcchat.opt_ins o ON o.page_id = c.page_id AND o.user_id = c.user_id
WHERE c.page_id = @page_id AND c.id < @cursor
ORDER BY c.id DESC LIMIT @lim;

-- name: ListConversationsBefore :many
-- Older-to-newer from the cursor; the caller reverses the rows.
SELECT sqlc.embed(c), COALESCE(o.status, 'none')::text AS opt_in_status
FROM svcchat.conversations c
LEFT JOIN svcchat.opt_ins o ON o.page_id = c.page_id AND o.user_id = c.user_id
WHERE c.page_id = @page_id AND c.id > @cursor
ORDER BY c.id ASC LIMIT @lim;

-- name: ListMessagesFirst :many
SELECT * FROM svcchat.messages
WHERE page_id = @page_id AND conversation_id = @conversation_id
ORDER BY seq DESC LIMIT @lim;

-- name: ListMessagesAfter :many
SELECT * FROM svcchat.messages
WHERE page_id = @page_id AND conversation_id = @conversation_id AND seq < @cursor
ORDER BY seq DESC LIMIT @lim;

-- name: ListMessagesBefore :many
SELECT * FROM svcchat.messages
WHERE page_id = @page_id AND conversation_id = @conversation_id AND seq > @cursor
ORDER BY seq ASC LIMIT @lim;

-- name: PostMessage :one
-- A message and the events that announce it, in one statement (one round
-- trip, and one new version of the conversation's row instead of one for
-- the message number and one for the event numbers). The caller holds the
-- conversation's row lock and numbered the events from the counters it read
-- with it (event_seq_before + 1, + 2, …); the counter check makes a
-- mismatch insert nothing (no row returned) rather than a wrong number.
-- The events are outbox rows internal/outbox made (as sdk/event's would
-- be), as columns: ids, types and data; all are of the message's Page and
-- conversation's ordering key, and about the conversation's person.
WITH counters AS (
    UPDATE svcchat.conversations c
    SET last_message_seq = c.last_message_seq + 1,
        last_event_seq = c.last_event_seq + cardinality(@event_ids::text[]),
        updated_at = now(),
        typing_until = CASE WHEN @clear_typing::boolean THEN NULL ELSE c.typing_until END
    WHERE c.page_id = @page_id::text AND c.id = @conversation_id::bigint
      AND c.last_message_seq = @message_seq_before::bigint
      AND c.last_event_seq = @event_seq_before::bigint
    RETURNING c.page_id, c.id, c.last_message_seq
), message AS (
    INSERT INTO svcchat.messages (page_id, conversation_id, seq, id, direction, sender, app_id, kind, template_name, text, sender_user_id)
    SELECT counters.page_id, counters.id, counters.last_message_seq, @id, @direction, @sender, @app_id, @kind, sqlc.narg(template_name), @text, @sender_user_id
    FROM counters
    RETURNING *
), emitted AS (
    INSERT INTO core.outbox (id, type, page_id, data, ordering_key, user_id)
    SELECT ev.id, (@event_types::text[])[ev.n], NULLIF(@event_page_id::text, ''), ((@event_data::text[])[ev.n])::jsonb,
           NULLIF(@ordering_key::text, ''), NULLIF(@event_user_id::text, '')
    FROM message, unnest(@event_ids::text[]) WITH ORDINALITY AS ev(id, n)
)
SELECT * FROM message;

-- name: PostMessageIf :one
-- An app's send (PostMessage's work for it): the message and its two
-- events, page.message.sent and svcchat.message.sent (sentEvents), whose
-- data this statement builds from its own parameters and the conversation's
-- row, as messageSent would marshal it: the text travels once and no JSON is
-- marshalled in Go or parsed here. It reports the message's id and seq (the
-- rest the send knows) and the versions (xmin) of the conversation's row it
-- leaves and of the opt-in record it saw. With guarded, it stores nothing (no
-- row returned) unless the conversation and the opt-in record ('' for none)
-- are still the versions given (those a previous send reported) and neither
-- the Page's restriction nor the user's block bars the send: the
-- one-round-trip send decided on that state before BEGIN and sends this with
-- the conversation's lock and COMMIT. That lock comes first, its own
-- statement, so this statement reads the latest committed state of what it
-- guards (READ COMMITTED takes a snapshot per statement). The opt-in
-- record's lock, the next in every writer's order, is taken here (opt): a
-- locking read returns the record's latest version even if it changed after
-- the snapshot, and holds it to COMMIT, as a statement of its own did.
WITH opt AS (
    SELECT o.xmin::text AS version FROM svcchat.opt_ins o
    WHERE o.page_id = @page_id::text AND o.user_id = @user_id::text
    FOR UPDATE
), counters AS (
    UPDATE svcchat.conversations c
    SET last_message_seq = c.last_message_seq + 1,
        last_event_seq = c.last_event_seq + 2,
        updated_at = now(),
        typing_until = NULL
    WHERE c.page_id = @page_id::text AND c.id = @conversation_id::bigint
      AND c.last_message_seq = @message_seq_before::bigint
      AND c.last_event_seq = @event_seq_before::bigint
      AND (NOT @guarded::boolean OR (
            c.xmin::text = @conversation_version::text
        AND COALESCE((SELECT opt.version FROM opt), '') = @opt_in_version::text
        AND NOT EXISTS (SELECT 1 FROM svcchat.page_restrictions r WHERE r.page_id = c.page_id)
        AND NOT EXISTS (SELECT 1 FROM svcchat.page_blocks b WHERE b.page_id = c.page_id AND b.user_id = c.user_id)))
    RETURNING c.page_id, c.id, c.user_id, c.last_message_seq, c.last_event_seq, c.xmin::text AS version
), message AS (
    INSERT INTO svcchat.messages (page_id, conversation_id, seq, id, direction, sender, app_id, kind, template_name, text, sender_user_id)
    SELECT counters.page_id, counters.id, counters.last_message_seq, @id::text, 'outbound', 'app', @app_id::text, @kind::text,
           sqlc.narg(template_name)::text, @text::text, ''
    FROM counters
    RETURNING id, seq
), emitted AS (
    INSERT INTO core.outbox (id, type, page_id, data, ordering_key, user_id)
    SELECT ev.id, ev.type, counters.page_id, ev.data, 'svcchat.conversation:' || counters.id::text, NULLIF(counters.user_id, '')
    FROM message, counters, LATERAL (VALUES
        (@page_event_id::text, 'page.message.sent', jsonb_build_object(
            'conversationId', counters.id::text, 'messageId', @id::text, 'pageId', counters.page_id,
            'userId', counters.user_id, 'text', @text::text, 'kind', @kind::text,
            'templateName', sqlc.narg(template_name)::text, 'sequence', counters.last_event_seq - 1)),
        (@sent_event_id::text, 'svcchat.message.sent', jsonb_build_object(
            'conversation', jsonb_build_object('id', counters.id::text, 'pageId', counters.page_id,
                'userId', counters.user_id, 'controlHolder', @control_holder::text),
            'message', jsonb_build_object('id', @id::text, 'text', @text::text, 'kind', @kind::text,
                'templateName', sqlc.narg(template_name)::text, 'appId', @app_id::text),
            'sequence', counters.last_event_seq))
    ) AS ev(id, type, data)
)
SELECT message.id, message.seq, counters.version::text AS conversation_version,
       COALESCE((SELECT opt.version FROM opt), '')::text AS opt_in_version
FROM message, counters;
