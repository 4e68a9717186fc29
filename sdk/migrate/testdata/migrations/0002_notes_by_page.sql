CREATE INDEX notes_by_page ON notes (page_id, id);
