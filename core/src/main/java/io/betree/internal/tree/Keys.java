package io.betree.internal.tree;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/** Unsigned lexicographic comparison of keys held in arrays and in off-heap buffers. */
public final class Keys {
    private Keys() {
    }

    /** Compares two keys as unsigned byte strings; a proper prefix sorts first. */
    public static int compare(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b);
    }

    /** Compares the key stored at {@code buf[offset, offset+length)} with {@code key}. */
    public static int compare(ByteBuf buf, int offset, int length, byte[] key) {
        int common = Math.min(length, key.length);
        int i = 0;
        for (; i + 8 <= common; i += 8) {
            long x = buf.getLong(offset + i);
            long y = longAt(key, i);
            if (x != y) {
                return Long.compareUnsigned(x, y);
            }
        }
        for (; i < common; i++) {
            int x = buf.getByte(offset + i) & 0xff;
            int y = key[i] & 0xff;
            if (x != y) {
                return x - y;
            }
        }
        return Integer.compare(length, key.length);
    }

    /** Compares two keys that are both stored in buffers. */
    public static int compare(ByteBuf a, int aOffset, int aLength, ByteBuf b, int bOffset, int bLength) {
        int common = Math.min(aLength, bLength);
        int i = 0;
        for (; i + 8 <= common; i += 8) {
            long x = a.getLong(aOffset + i);
            long y = b.getLong(bOffset + i);
            if (x != y) {
                return Long.compareUnsigned(x, y);
            }
        }
        for (; i < common; i++) {
            int x = a.getByte(aOffset + i) & 0xff;
            int y = b.getByte(bOffset + i) & 0xff;
            if (x != y) {
                return x - y;
            }
        }
        return Integer.compare(aLength, bLength);
    }

    private static long longAt(byte[] a, int i) {
        return ((long) (a[i] & 0xff) << 56) | ((long) (a[i + 1] & 0xff) << 48) | ((long) (a[i + 2] & 0xff) << 40)
                | ((long) (a[i + 3] & 0xff) << 32) | ((long) (a[i + 4] & 0xff) << 24) | ((a[i + 5] & 0xff) << 16)
                | ((a[i + 6] & 0xff) << 8) | (a[i + 7] & 0xff);
    }

    /** Copies the key at {@code buf[offset, offset+length)} to a new array. */
    public static byte[] copy(ByteBuf buf, int offset, int length) {
        byte[] out = new byte[length];
        buf.getBytes(offset, out);
        return out;
    }
}
