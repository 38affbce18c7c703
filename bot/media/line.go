package media

import (
	"fmt"

	"github.com/switchboard-chat/switchboard/bot"
)

// Line is what the model reads for one attachment:
// "[attachment: inbox/report.pdf, application/pdf, 3.4 MB]".
func Line(relPath, typ string, size int64) string {
	return fmt.Sprintf("[attachment: %s, %s, %s]", relPath, typ, HumanSize(size))
}

// HumanSize writes a byte count the way people read it (bot.HumanSize):
// "512 bytes", "12 KB", "3.4 MB".
func HumanSize(n int64) string { return bot.HumanSize(n) }
