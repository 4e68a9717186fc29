package pgembed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// POSIX access control lists, as Linux stores them in the
// system.posix_acl_access extended attribute (linux/posix_acl_xattr.h):
// a little-endian version word, then entries of a 16-bit tag, 16-bit
// permissions and a 32-bit id, sorted by tag and id.
const (
	aclXattr   = "system.posix_acl_access"
	aclVersion = 2

	aclUserObj  = 0x01
	aclUser     = 0x02
	aclGroupObj = 0x04
	aclGroup    = 0x08
	aclMask     = 0x10
	aclOther    = 0x20

	aclUndefinedID = 0xffffffff
	aclExecute     = 0o1
)

type aclEntry struct {
	tag, perm uint16
	id        uint32
}

// readACL returns the access ACL of path, or the one its mode bits stand
// for when it has none.
func readACL(path string, info os.FileInfo) ([]aclEntry, error) {
	buf := make([]byte, 1024)
	n, err := syscall.Getxattr(path, aclXattr, buf)
	if errors.Is(err, syscall.ENODATA) || errors.Is(err, syscall.ENOTSUP) {
		perm := uint16(info.Mode().Perm())
		return []aclEntry{
			{aclUserObj, perm >> 6 & 7, aclUndefinedID},
			{aclGroupObj, perm >> 3 & 7, aclUndefinedID},
			{aclOther, perm & 7, aclUndefinedID},
		}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgembed: read the access list of %s: %w", path, err)
	}
	buf = buf[:n]
	if len(buf) < 4 || binary.LittleEndian.Uint32(buf) != aclVersion || (len(buf)-4)%8 != 0 {
		return nil, fmt.Errorf("pgembed: the access list of %s is in an unknown format", path)
	}
	var acl []aclEntry
	for b := buf[4:]; len(b) > 0; b = b[8:] {
		acl = append(acl, aclEntry{binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:]), binary.LittleEndian.Uint32(b[4:])})
	}
	return acl, nil
}

func writeACL(path string, acl []aclEntry) error {
	sort.Slice(acl, func(i, j int) bool {
		if acl[i].tag != acl[j].tag {
			return acl[i].tag < acl[j].tag
		}
		return acl[i].id < acl[j].id
	})
	buf := binary.LittleEndian.AppendUint32(nil, aclVersion)
	for _, e := range acl {
		buf = binary.LittleEndian.AppendUint16(buf, e.tag)
		buf = binary.LittleEndian.AppendUint16(buf, e.perm)
		buf = binary.LittleEndian.AppendUint32(buf, e.id)
	}
	return syscall.Setxattr(path, aclXattr, buf, 0)
}

// canTraverse tells whether the account may pass through the folder path,
// by the access check of acl(5): owner, named user (within the mask),
// owning or named group (within the mask), others. The account has no
// supplementary groups (see credential).
func (a *account) canTraverse(path string) (bool, error) {
	info, err := os.Stat(path)
	if err != nil {
		return false, fmt.Errorf("pgembed: %s: %w", path, err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return true, nil
	}
	if int(st.Uid) == a.uid {
		return info.Mode().Perm()&0o100 != 0, nil
	}
	acl, err := readACL(path, info)
	if err != nil {
		return false, err
	}
	mask := uint16(7)
	for _, e := range acl {
		if e.tag == aclMask {
			mask = e.perm
		}
	}
	for _, e := range acl {
		if e.tag == aclUser && e.id == uint32(a.uid) {
			return e.perm&mask&aclExecute != 0, nil
		}
	}
	inGroup, groupCan := false, false
	for _, e := range acl {
		if (e.tag == aclGroupObj && int(st.Gid) == a.gid) || (e.tag == aclGroup && e.id == uint32(a.gid)) {
			inGroup = true
			groupCan = groupCan || e.perm&mask&aclExecute != 0
		}
	}
	if inGroup {
		return groupCan, nil
	}
	for _, e := range acl {
		if e.tag == aclOther {
			return e.perm&aclExecute != 0, nil
		}
	}
	return false, nil
}

// grantTraverse lets the account pass through every folder from / down to
// dir that it cannot pass through yet, by an access-list entry naming it
// alone (u:<account>:--x, the mask widened by x only): it may then reach
// the files inside whose own modes let it, but list nothing, and no other
// user of the machine (a plugin's above all) gains anything. The folders'
// modes, owners and other entries are left as they were. It returns the
// folders it changed.
func (a *account) grantTraverse(dir string) ([]string, error) {
	if a == nil {
		return nil, nil
	}
	var chain []string
	for p := dir; ; p = filepath.Dir(p) {
		chain = append(chain, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	var changed []string
	for i := len(chain) - 1; i >= 0; i-- {
		p := chain[i]
		can, err := a.canTraverse(p)
		if err != nil {
			return changed, err
		}
		if can {
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			return changed, fmt.Errorf("pgembed: %s: %w", p, err)
		}
		acl, err := readACL(p, info)
		if err != nil {
			return changed, err
		}
		named, masked := false, false
		var groupObj uint16
		for k := range acl {
			switch {
			case acl[k].tag == aclUser && acl[k].id == uint32(a.uid):
				acl[k].perm |= aclExecute
				named = true
			case acl[k].tag == aclMask:
				acl[k].perm |= aclExecute
				masked = true
			case acl[k].tag == aclGroupObj:
				groupObj = acl[k].perm
			}
		}
		if !named {
			acl = append(acl, aclEntry{aclUser, aclExecute, uint32(a.uid)})
		}
		if !masked {
			// The mask bounds the group class; it keeps what the owning
			// group had, so the group gains nothing.
			acl = append(acl, aclEntry{aclMask, groupObj | aclExecute, aclUndefinedID})
		}
		if err := writeACL(p, acl); err != nil {
			return changed, fmt.Errorf("pgembed: this process runs as root, so PostgreSQL runs as user %s (uid %d), which cannot enter %s (mode %v), and an access-list entry letting it pass could not be added (%w): run `chmod o+x %s`, or choose a data folder outside it",
				a.name, a.uid, p, info.Mode().Perm(), err, p)
		}
		if ok, err := a.canTraverse(p); err != nil || !ok {
			return changed, fmt.Errorf("pgembed: user %s still cannot enter %s after an access-list entry was added: run `chmod o+x %s`, or choose a data folder outside it", a.name, p, p)
		}
		changed = append(changed, p)
	}
	return changed, nil
}
