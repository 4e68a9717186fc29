// Package msgwindow is the customer service window that the business
// messaging products share (svcchat's session window, extmsg's customer
// window; CONTRACT §5): a person's message to a business opens it for
// Length, and while it is open the business may answer with free-form
// messages; outside it only templates may be sent.
package msgwindow

import (
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// Length is how long a person's last message keeps the window open.
const Length = 24 * time.Hour

// Open tells whether a window that ends at expires is open now; a window
// that never opened (NULL) is closed.
func Open(expires pgtype.Timestamptz) bool {
	return expires.Valid && time.Now().Before(expires.Time)
}
