-- name: InsertAdAccount :one
INSERT INTO ads.ad_accounts (business_id, name) VALUES (@business_id, @name) RETURNING *;

-- name: CountBusinessAdAccounts :one
SELECT count(*) FROM ads.ad_accounts WHERE business_id = @business_id;

-- name: LockBusiness :exec
-- Serialises creates in one business, so that its limit holds.
SELECT pg_advisory_xact_lock(hashtextextended('ads.business:' || @business_id::text, 0));

-- name: BusinessAdAccountsAfter :many
SELECT * FROM ads.ad_accounts WHERE business_id = @business_id AND id > @after ORDER BY id LIMIT @lim;

-- name: BusinessAdAccountsBefore :many
SELECT * FROM ads.ad_accounts WHERE business_id = @business_id AND id < @before ORDER BY id DESC LIMIT @lim;

-- name: GetAdAccount :one
SELECT * FROM ads.ad_accounts WHERE id = @id;

-- name: InsertLeadgenForm :one
INSERT INTO ads.leadgen_forms (ad_account_id, name, questions, privacy_policy_url)
VALUES (@ad_account_id, @name, @questions, @privacy_policy_url)
RETURNING *;

-- name: GetLeadgenForm :one
SELECT f.*, a.business_id FROM ads.leadgen_forms f JOIN ads.ad_accounts a ON a.id = f.ad_account_id
WHERE f.id = @id;

-- name: LeadgenFormsAfter :many
SELECT * FROM ads.leadgen_forms WHERE ad_account_id = @ad_account_id AND id > @after ORDER BY id LIMIT @lim;

-- name: LeadgenFormsBefore :many
SELECT * FROM ads.leadgen_forms WHERE ad_account_id = @ad_account_id AND id < @before ORDER BY id DESC LIMIT @lim;

-- name: FormOfAccountExists :one
SELECT EXISTS (SELECT 1 FROM ads.leadgen_forms WHERE ad_account_id = @ad_account_id AND id = @id);

-- name: InsertLeadCampaign :one
INSERT INTO ads.lead_campaigns (ad_account_id, name, status, leadgen_form_id)
VALUES (@ad_account_id, @name, @status, sqlc.narg(leadgen_form_id))
RETURNING *;

-- name: LeadCampaignsAfter :many
SELECT * FROM ads.lead_campaigns WHERE ad_account_id = @ad_account_id AND id > @after ORDER BY id LIMIT @lim;

-- name: LeadCampaignsBefore :many
SELECT * FROM ads.lead_campaigns WHERE ad_account_id = @ad_account_id AND id < @before ORDER BY id DESC LIMIT @lim;

-- name: InsertLead :one
-- Nothing when the person already submitted a lead to the form.
INSERT INTO ads.leads (ad_account_id, form_id, user_id, field_data)
VALUES (@ad_account_id, @form_id, @user_id, @field_data)
ON CONFLICT (ad_account_id, form_id, user_id) DO NOTHING
RETURNING *;

-- name: LeadsAfter :many
SELECT * FROM ads.leads WHERE ad_account_id = @ad_account_id AND form_id = @form_id AND id > @after ORDER BY id LIMIT @lim;

-- name: LeadsBefore :many
SELECT * FROM ads.leads WHERE ad_account_id = @ad_account_id AND form_id = @form_id AND id < @before ORDER BY id DESC LIMIT @lim;
