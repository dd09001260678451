package io.betree.internal.tree;

import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * The segment layouts a leaf keeps, one per basement (or none): each is what the leaf last learned
 * of its basement's stored version, and may be out of date, which a read by it detects
 * ({@link SegmentLayout}). All are kept off the heap in their stored form: those read with the
 * leaf stay in the leaf's stored image, those learned later (by a read that found a newer version)
 * go to a buffer of the leaf's own. Held as heap objects, a leaf's layouts outlived the young
 * generation by the thousand: a 3 M-row load under a 64 MiB heap peaked a fifth higher.
 *
 * <p>Readers of the leaf share it, and one may learn a layout while others read them, or while the
 * leaf is serialized: those three take a monitor of this object's own (a layout is copied out in
 * microseconds). Changes to the list itself come from the leaf's writers, who hold it alone.
 */
final class LeafLayouts {
    private static final int NONE = -1;

    private final NodeMemory memory;
    private final Object lock = new Object();
    /** The leaf's stored image (owned by the leaf), or null. */
    private final ByteBuf image;
    /** Per basement: an offset in {@code image}, {@link #NONE}, or {@code -2 - offset} in {@code learned}. */
    private final List<Integer> at;
    /** Layouts learned since the leaf was read, back to back; null until the first. Owned. */
    private ByteBuf learned;

    /** Layouts at {@code offsets} in {@code image} (or {@link #NONE}). */
    LeafLayouts(NodeMemory memory, ByteBuf image, List<Integer> offsets) {
        this.memory = memory;
        this.image = image;
        this.at = offsets;
    }

    /** Layouts given as objects (null for none), stored in a buffer of their own. */
    static LeafLayouts of(NodeMemory memory, List<SegmentLayout> layouts) {
        LeafLayouts l = new LeafLayouts(memory, null, new ArrayList<>(layouts.size()));
        l.addAll(layouts);
        return l;
    }

    /**
     * The layout of basement {@code b}, copied; or null, also for a malformed one: a layout is a
     * hint (a read by it checks what it reads), and the whole read that follows teaches a sound one.
     */
    SegmentLayout get(int b) {
        synchronized (lock) {
            int where = at.get(b);
            if (where == NONE) {
                return null;
            }
            try {
                return where >= 0 ? SegmentLayout.copy(image, where) : SegmentLayout.copy(learned, -2 - where);
            } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
                return null;
            }
        }
    }

    /** Records {@code layout} for basement {@code b}. */
    void learn(int b, SegmentLayout layout) {
        synchronized (lock) {
            at.set(b, -2 - append(layout));
        }
    }

    /**
     * Appends {@code layout} to {@code learned}, first moving the live layouts to a new buffer when
     * it is full (so that replaced ones do not pile up); returns its offset. Lock held.
     */
    private int append(SegmentLayout layout) {
        int length = layout.serializedSize();
        if (learned == null || learned.writableBytes() < length) {
            int live = length;
            for (int where : at) {
                live += where <= -2 ? SegmentLayout.length(learned, -2 - where) : 0;
            }
            ByteBuf next = memory.allocate(Math.max(1 << 10, 2 * live));
            for (int i = 0; i < at.size(); i++) {
                int where = at.get(i);
                if (where <= -2) {
                    at.set(i, -2 - next.writerIndex());
                    next.writeBytes(learned, -2 - where, SegmentLayout.length(learned, -2 - where));
                }
            }
            memory.release(learned);
            learned = next;
        }
        int offset = learned.writerIndex();
        layout.write(learned);
        return offset;
    }

    /** Inserts basement {@code b} with no layout. */
    void insertNone(int b) {
        synchronized (lock) {
            at.add(b, NONE);
        }
    }

    /** Removes basement {@code b}'s entry. */
    void remove(int b) {
        synchronized (lock) {
            at.remove(b);
        }
    }

    /** The layouts of basements {@code [start, end)} as objects, then removes them. */
    List<SegmentLayout> cut(int start, int end) {
        synchronized (lock) {
            List<SegmentLayout> out = new ArrayList<>(end - start);
            for (int b = start; b < end; b++) {
                out.add(get(b));
            }
            at.subList(start, end).clear();
            return out;
        }
    }

    /** Appends entries for {@code layouts} (null for none). */
    void addAll(List<SegmentLayout> layouts) {
        synchronized (lock) {
            for (SegmentLayout l : layouts) {
                at.add(NONE);
                if (l != null) {
                    at.set(at.size() - 1, -2 - append(l));
                }
            }
        }
    }

    /** Bytes {@link #write} writes. */
    int serializedSize() {
        synchronized (lock) {
            int size = 0;
            for (int where : at) {
                size += 1 + (where == NONE ? 0 : where >= 0 ? SegmentLayout.length(image, where)
                        : SegmentLayout.length(learned, -2 - where));
            }
            return size;
        }
    }

    /** Writes, per basement, 1 and its layout, or 0 for none (the leaf's stored form). */
    void write(ByteBuf out) {
        synchronized (lock) {
            for (int where : at) {
                if (where == NONE) {
                    out.writeByte(0);
                } else {
                    ByteBuf from = where >= 0 ? image : learned;
                    int offset = where >= 0 ? where : -2 - where;
                    out.writeByte(1).writeBytes(from, offset, SegmentLayout.length(from, offset));
                }
            }
        }
    }

    /** Off-heap and heap bytes of the learned layouts and the list (the image is the leaf's). */
    long memoryBytes() {
        synchronized (lock) {
            return 16L * at.size() + (learned == null ? 0 : learned.capacity());
        }
    }

    /** Releases the learned layouts' buffer; the object is unusable afterwards. */
    void release() {
        synchronized (lock) {
            memory.release(learned);
            learned = null;
            at.clear();
        }
    }
}
