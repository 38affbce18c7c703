package bot

import (
	"fmt"
	"strconv"
	"strings"
)

// HumanSize writes a byte count the way people read it, in decimal units:
// "512 bytes", "12 KB", "3.4 MB".
func HumanSize(n int64) string {
	if n < 1000 {
		if n == 1 {
			return "1 byte"
		}
		return strconv.FormatInt(n, 10) + " bytes"
	}
	units := []string{"KB", "MB", "GB", "TB"}
	v := float64(n) / 1000
	i := 0
	for v >= 999.5 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if v >= 10 {
		return fmt.Sprintf("%.0f %s", v, units[i])
	}
	s := strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0")
	return s + " " + units[i]
}
