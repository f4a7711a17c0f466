package draw

import (
	"fmt"
	"sort"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// dnode is a snapshot of one dentry: what the picture shows of it.
type dnode struct {
	name     string
	count    int
	kind     string
	negative bool
	nokey    bool
	children []*dnode
	x, y     int
}

// snapshotDentry copies d and its children (fs/dcache.c's d_children
// lists, walked under each parent's d_lock). Each child's count is read
// before the walk takes its own reference to descend into it.
func snapshotDentry(t *kernel.Task, d *dcache.Dentry[vfs.Inode], name string, count int) *dnode {
	n := &dnode{name: name, count: count, negative: d.IsNegative(), nokey: d.IsNokeyName()}
	switch {
	case d.IsNegative():
		n.kind = "negative"
	case d.IsDir():
		n.kind = "dir"
	case d.IsSymlink():
		n.kind = "symlink"
	case d.IsReg():
		n.kind = "file"
	default:
		n.kind = "other"
	}
	type kid struct {
		d     *dcache.Dentry[vfs.Inode]
		name  string
		count int
	}
	var kids []kid
	dcache.ForEachChild(t, d, func(c *dcache.Dentry[vfs.Inode]) bool {
		cnt := c.Count()
		if cnt >= 0 {
			dcache.DgetDlock(t, c)
			kids = append(kids, kid{c, c.Name().Name, cnt})
		}
		return true
	})
	sort.Slice(kids, func(i, j int) bool { return kids[i].name < kids[j].name })
	for _, k := range kids {
		n.children = append(n.children, snapshotDentry(t, k.d, k.name, k.count))
		dcache.Dput(t, k.d)
	}
	return n
}

const (
	dBoxW, dBoxH = 150, 54
	dSlot        = 170
	dRow         = 100
	dTop         = 70
)

// layoutTree places leaves in slots left to right and each parent above
// the middle of its children.
func layoutTree(n *dnode, depth int, next *int) {
	n.y = dTop + depth*dRow
	if len(n.children) == 0 {
		n.x = 20 + *next*dSlot
		*next++
		return
	}
	for _, c := range n.children {
		layoutTree(c, depth+1, next)
	}
	n.x = (n.children[0].x + n.children[len(n.children)-1].x) / 2
}

// drawDentryTree draws the tree rooted at root: one box per dentry with
// its name, d_lockref.count and type, and a d_parent arrow from each
// child to its parent.
func drawDentryTree(root *dnode, title string, notes []string) string {
	c := &canvas{}
	next := 0
	layoutTree(root, 0, &next)
	c.text(20, 28, "start", 18, "bold", colInk, title)
	for i, n := range notes {
		c.text(20, 48+i*16, "start", 12, "normal", colMuted, n)
	}
	var walk func(n *dnode)
	walk = func(n *dnode) {
		fill := map[string]string{"dir": colDir, "file": colFile, "symlink": colLink, "negative": colNeg}[n.kind]
		if fill == "" {
			fill = colFile
		}
		c.box("dentry", n.x, n.y, dBoxW, dBoxH, fill, colInk, n.negative)
		label := n.name
		if len(label) > 22 {
			label = label[:10] + "…" + label[len(label)-8:]
		}
		c.text(n.x+dBoxW/2, n.y+18, "middle", 13, "bold", colInk, label)
		c.text(n.x+dBoxW/2, n.y+34, "middle", 11, "normal", colInk, fmt.Sprintf("d_lockref.count=%d", n.count))
		kind := n.kind
		if n.nokey {
			kind += ", DCACHE_NOKEY_NAME"
		}
		c.text(n.x+dBoxW/2, n.y+48, "middle", 10, "normal", colMuted, kind)
		for _, ch := range n.children {
			// d_parent: child -> parent.
			c.arrow("d_parent", ch.x+dBoxW/2, ch.y, n.x+dBoxW/2, n.y+dBoxH, "#555555", false)
			walk(ch)
		}
	}
	walk(root)
	// Legend.
	ly := c.h + 10
	c.text(20, ly, "start", 11, "normal", colMuted, "arrows: d_parent (child → parent; each child holds a reference on its parent); dashed box: negative dentry; count: d_lockref.count")
	return c.String(title)
}
