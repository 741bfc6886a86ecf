//go:build !unix

package trust

import "os"

// mkfifo writes a regular file where FIFOs do not exist; the test then
// pins it, so TestScanPinsWhatCanSteerReins runs only on unix.
func mkfifo(path string) error { return os.WriteFile(path, nil, 0o644) }
