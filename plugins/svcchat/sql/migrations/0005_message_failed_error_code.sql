-- Issue 18: a Page message fails when the user opts out before their chat
-- app fetched it (docs/DECISIONS.md, "A message fails when its user opts
-- out first"). messages.error keeps the refusal's text; these keep its
-- Graph error code and subcode beside it.
ALTER TABLE svcchat.messages
    ADD COLUMN error_code    integer NOT NULL DEFAULT 0,
    ADD COLUMN error_subcode integer NOT NULL DEFAULT 0;
