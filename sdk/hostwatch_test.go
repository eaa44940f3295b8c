package sdk

import "testing"

func TestParseHostPipe(t *testing.T) {
	if fd, ino, ok := parseHostPipe("3:4242"); !ok || fd != 3 || ino != 4242 {
		t.Fatalf("3:4242 = %d %d %v", fd, ino, ok)
	}
	// Never stdin, stdout or stderr, and nothing that is not FD:INODE.
	for _, bad := range []string{"", "3", "2:1", "x:1", "3:y", "-1:5", "3:5:6"} {
		if _, _, ok := parseHostPipe(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}
