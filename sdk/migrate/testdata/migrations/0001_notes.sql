-- Unqualified names land in the owner schema: search_path starts with it.
CREATE TABLE notes (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    page_id bigint NOT NULL,
    body    text   NOT NULL
);
