package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// OpenAppend opens path for appending (creating it, or emptying it with trunc), the way
// a run's logs and caches grow. It never writes through a link made after the run
// directory was checked (issue 31): a symbolic link at path is refused (O_NOFOLLOW),
// and so is a file with another hard link (appending would change that file too), or
// anything but a regular file. The errors are deterministic (exit 3): remove the link.
func OpenAppend(path string, trunc bool) (*os.File, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND | syscall.O_NOFOLLOW | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	if trunc {
		flags |= os.O_TRUNC
	}
	// Checked before opening too: O_TRUNC would empty the other name's file at once.
	if st, err := os.Lstat(path); err == nil {
		if err := appendable(path, st); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &linkError{fmt.Sprintf("%s is a symbolic link: a run's files are never written through one; remove it", path)}
		}
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = appendable(path, st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func appendable(path string, st os.FileInfo) error {
	if st.Mode()&os.ModeSymlink != 0 {
		return &linkError{fmt.Sprintf("%s is a symbolic link: a run's files are never written through one; remove it", path)}
	}
	if !st.Mode().IsRegular() {
		return &linkError{fmt.Sprintf("%s is not a regular file; remove it", path)}
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return &linkError{fmt.Sprintf("%s has %d hard links: appending to it would change another file too; remove it (or copy it to a file of its own)", path, sys.Nlink)}
	}
	return nil
}

// linkError is deterministic (core/fault reads the method): the link stays until removed.
type linkError struct{ msg string }

func (e *linkError) Error() string       { return e.msg }
func (e *linkError) Deterministic() bool { return true }
