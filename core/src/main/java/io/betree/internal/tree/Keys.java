package io.betree.internal.tree;

import io.netty.buffer.ByteBuf;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/** Unsigned lexicographic comparison of keys held in arrays and in off-heap buffers. */
public final class Keys {
    private static final VarHandle BIG_ENDIAN_LONGS = MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.BIG_ENDIAN);

    private Keys() {
    }

    /** Compares two keys as unsigned byte strings; a proper prefix sorts first. */
    public static int compare(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b);
    }

    /** Compares the key stored at {@code buf[offset, offset+length)} (absolute) with {@code key}. */
    public static int compare(ByteBuffer buf, int offset, int length, byte[] key) {
        int common = Math.min(length, key.length);
        int i = 0;
        for (; i + 8 <= common; i += 8) {
            long x = buf.getLong(offset + i);
            long y = (long) BIG_ENDIAN_LONGS.get(key, i);
            if (x != y) {
                return Long.compareUnsigned(x, y);
            }
        }
        for (; i < common; i++) {
            int x = buf.get(offset + i) & 0xff;
            int y = key[i] & 0xff;
            if (x != y) {
                return x - y;
            }
        }
        return Integer.compare(length, key.length);
    }

    /** Compares two keys that are both stored in buffers (absolute positions). */
    public static int compare(ByteBuffer a, int aOffset, int aLength, ByteBuffer b, int bOffset, int bLength) {
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
            int x = a.get(aOffset + i) & 0xff;
            int y = b.get(bOffset + i) & 0xff;
            if (x != y) {
                return x - y;
            }
        }
        return Integer.compare(aLength, bLength);
    }

    /** Copies the key at {@code buf[offset, offset+length)} (absolute) to a new array. */
    public static byte[] copy(ByteBuffer buf, int offset, int length) {
        byte[] out = new byte[length];
        buf.get(offset, out, 0, length);
        return out;
    }

    /** Copies the key at {@code buf[offset, offset+length)} to a new array. */
    public static byte[] copy(ByteBuf buf, int offset, int length) {
        byte[] out = new byte[length];
        buf.getBytes(offset, out);
        return out;
    }

    /** The larger of two keys, either of which may be null (none): null only when both are. */
    static byte[] max(byte[] a, byte[] b) {
        return a == null || b != null && compare(b, a) > 0 ? b : a;
    }
}
