package hook

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// A hook's payload may be of any size: a Write carries the whole file it
// writes, a Bash call its whole command. The hooks need its small fields
// (the session, the tool, the path a Write targets) and, up to a bound,
// a command or a prompt; they never need the content of a file. So the
// payload is read as a stream into a copy of it whose strings longer than
// maxString are left empty (their paths listed in payload.Dropped), and
// nothing larger than maxReduced is ever held: a Write of a gigabyte is
// read to its end, and its target known, in a few kilobytes of memory.

// maxString is the longest string of the payload kept: longer ones (the
// content of a Write, an unusually long command or prompt) are dropped.
const maxString = 1 << 20

// maxReduced bounds the whole kept copy of the payload.
const maxReduced = 4 << 20

// errTooLarge reports a payload whose kept part passes maxReduced.
var errTooLarge = errors.New("the payload's fields pass 4 MiB without their long strings")

// reduce reads one JSON value from r and returns it with every string
// longer than maxString replaced by "" and the paths of those strings
// ("tool_input.content"). It reads nothing past the value.
func reduce(r io.Reader) ([]byte, []string, error) {
	d := &reducer{r: bufio.NewReader(r)}
	if err := d.value(""); err != nil {
		if err == io.EOF && d.out.Len() > 0 {
			err = io.ErrUnexpectedEOF // cut short: not an empty stdin
		}
		return nil, nil, err
	}
	return d.out.Bytes(), d.dropped, nil
}

type reducer struct {
	r       *bufio.Reader
	out     bytes.Buffer
	dropped []string
}

func (d *reducer) next() (byte, error) {
	for {
		c, err := d.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, nil
		}
	}
}

func (d *reducer) write(b ...byte) error {
	if d.out.Len()+len(b) > maxReduced {
		return errTooLarge
	}
	d.out.Write(b)
	return nil
}

// value copies one JSON value at path.
func (d *reducer) value(path string) error {
	c, err := d.next()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		return d.object(path)
	case '[':
		return d.array(path)
	case '"':
		s, kept, err := d.str()
		if err != nil {
			return err
		}
		if !kept {
			d.dropped = append(d.dropped, path)
		}
		return d.write(s...)
	}
	return d.scalar(c)
}

func (d *reducer) object(path string) error {
	if err := d.write('{'); err != nil {
		return err
	}
	for first := true; ; first = false {
		c, err := d.next()
		if err != nil {
			return err
		}
		if c == '}' {
			return d.write('}')
		}
		if !first {
			if c != ',' {
				return fmt.Errorf("want , or } in an object, have %q", c)
			}
			if err := d.write(','); err != nil {
				return err
			}
			if c, err = d.next(); err != nil {
				return err
			}
		}
		if c != '"' {
			return fmt.Errorf("want a key in an object, have %q", c)
		}
		key, kept, err := d.str()
		if err != nil || !kept {
			return errors.Join(err, errors.New("a key of the payload is too long"))
		}
		if c, err = d.next(); err != nil || c != ':' {
			return errors.Join(err, errors.New("want : after a key"))
		}
		if err := d.write(append(key, ':')...); err != nil {
			return err
		}
		name, _ := strconv.Unquote(string(key))
		if path != "" {
			name = path + "." + name
		}
		if err := d.value(name); err != nil {
			return err
		}
	}
}

func (d *reducer) array(path string) error {
	if err := d.write('['); err != nil {
		return err
	}
	for i := 0; ; i++ {
		c, err := d.next()
		if err != nil {
			return err
		}
		if c == ']' {
			return d.write(']')
		}
		if i > 0 {
			if c != ',' {
				return fmt.Errorf("want , or ] in an array, have %q", c)
			}
			if err := d.write(','); err != nil {
				return err
			}
		} else if err := d.r.UnreadByte(); err != nil {
			return err
		}
		if err := d.value(path + "." + strconv.Itoa(i)); err != nil {
			return err
		}
	}
}

// str reads a string whose opening quote was read, and returns it quoted
// as it was written; kept is false, and the string "", when it is longer
// than maxString, which is read to its end but not held.
func (d *reducer) str() (quoted []byte, kept bool, err error) {
	buf := []byte{'"'}
	kept = true
	for {
		c, err := d.r.ReadByte()
		if err != nil {
			return nil, false, err
		}
		if kept {
			buf = append(buf, c)
		}
		switch c {
		case '"':
			if !kept {
				return []byte(`""`), false, nil
			}
			return buf, true, nil
		case '\\':
			e, err := d.r.ReadByte()
			if err != nil {
				return nil, false, err
			}
			if kept {
				buf = append(buf, e)
			}
		}
		if kept && len(buf) > maxString {
			kept, buf = false, nil
		}
	}
}

// scalar copies a number, true, false or null starting with c.
func (d *reducer) scalar(c byte) error {
	b := []byte{c}
	for {
		n, err := d.r.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if !(n >= '0' && n <= '9' || n >= 'a' && n <= 'z' || n == '.' || n == '+' || n == '-' || n == 'E') {
			if err := d.r.UnreadByte(); err != nil {
				return err
			}
			break
		}
		if len(b) > 64 {
			return errors.New("a number or literal of the payload is too long")
		}
		b = append(b, n)
	}
	return d.write(b...)
}
