package io.betree.internal.tree;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The value of an {@link MessageType#UPDATE} message: one or more calls of update functions, applied
 * in order to the key's value before the message. A transaction that updates a key several times
 * without knowing its value commits one message holding every call, since two messages of one commit
 * may not share a key (they would share its timestamp too).
 *
 * <p>Stored form (docs/format.md): call count (2 bytes), then per call the function's name length
 * (1), its UTF-8 name (1 to 255 bytes), the argument's length (4) and the argument. All methods are
 * static and thread-safe; arrays passed in are not kept.
 */
public final class UpdateList {
    /** The longest function name, in UTF-8 bytes. */
    public static final int MAX_NAME_BYTES = 255;
    private static final int MAX_CALLS = 0xffff;
    /**
     * Names encoded and checked before, up to {@link #CACHED_NAMES}: an environment calls a few
     * registered functions millions of times, and checking and encoding the name each time was
     * 7% of a counter-incrementing writer's time. The arrays are never handed out.
     */
    private static final ConcurrentHashMap<String, byte[]> ENCODED = new ConcurrentHashMap<>();
    private static final int CACHED_NAMES = 1024;

    private UpdateList() {
    }

    /** One call of {@code name} with {@code argument}. */
    public static byte[] of(String name, byte[] argument) {
        return append(null, name, argument);
    }

    /**
     * {@code list} (null: none yet) with a call of {@code name} with {@code argument} after its own.
     *
     * @throws IllegalArgumentException if the name is empty or too long, or the list is full
     */
    public static byte[] append(byte[] list, String name, byte[] argument) {
        byte[] n = ENCODED.get(name);
        if (n == null) {
            n = nameBytes(name);
            if (ENCODED.size() < CACHED_NAMES) {
                ENCODED.put(name, n.clone());
            }
        }
        int calls = list == null ? 0 : count(list);
        if (calls == MAX_CALLS) {
            throw new IllegalArgumentException("a key takes at most " + MAX_CALLS + " updates in one transaction");
        }
        int old = list == null ? 2 : list.length;
        ByteBuffer out = ByteBuffer.allocate(Math.addExact(old, 1 + n.length + 4 + argument.length));
        if (list == null) {
            out.putShort((short) 0);
        } else {
            out.put(list);
        }
        out.put((byte) n.length).put(n).putInt(argument.length).put(argument);
        out.putShort(0, (short) (calls + 1));
        return out.array();
    }

    /**
     * The calls of {@code first} then those of {@code second}, as one list.
     *
     * @throws IllegalArgumentException if they hold more than 65,535 calls together
     */
    public static byte[] concat(byte[] first, byte[] second) {
        int calls = count(first) + count(second);
        if (calls > MAX_CALLS) {
            throw new IllegalArgumentException("a list takes at most " + MAX_CALLS + " calls");
        }
        ByteBuffer out = ByteBuffer.allocate(Math.addExact(first.length, second.length - 2));
        out.putShort((short) calls).put(first, 2, first.length - 2).put(second, 2, second.length - 2);
        return out.array();
    }

    /**
     * The UTF-8 bytes of a function's name.
     *
     * @throws IllegalArgumentException if the name is empty, longer than {@link #MAX_NAME_BYTES}
     *     bytes, or not well-formed text (a lone surrogate would be stored as another name)
     */
    public static byte[] nameBytes(String name) {
        ByteBuffer encoded;
        try {
            encoded = StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).encode(CharBuffer.wrap(name));
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("an update function's name must be well-formed Unicode: " + e);
        }
        byte[] n = new byte[encoded.remaining()];
        encoded.get(n);
        if (n.length == 0 || n.length > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("an update function's name takes 1 to " + MAX_NAME_BYTES
                    + " bytes of UTF-8, not " + n.length);
        }
        return n;
    }

    /** The number of calls in {@code list}. */
    public static int count(byte[] list) {
        return ((list[0] & 0xff) << 8) | (list[1] & 0xff);
    }

    /**
     * The value of {@code key} after the calls of {@code list}, in order, starting from {@code base}
     * (null: absent); null when the key ends up absent. A call whose function throws changes
     * nothing, and {@link UpdateFunctions#failed} is told: the call runs where the update meets the
     * value (a flush, a read, a scan), long after its commit, which cannot fail any more, and every
     * one of those places must agree on the value.
     *
     * @throws io.betree.internal.fault.BetreeException if a call names no registered function
     */
    public static byte[] apply(UpdateFunctions functions, byte[] key, byte[] base, byte[] list) {
        return apply(functions, key, base, list, false);
    }

    /**
     * As {@link #apply(UpdateFunctions, byte[], byte[], byte[])} for a broadcast, which changes only
     * a present value: stops, leaving the key absent, as soon as it is (at once when {@code base}
     * is null), so that a later call of a broadcast's list cannot create the key.
     */
    public static byte[] applyWhilePresent(UpdateFunctions functions, byte[] key, byte[] base, byte[] list) {
        return base == null ? null : apply(functions, key, base, list, true);
    }

    private static byte[] apply(UpdateFunctions functions, byte[] key, byte[] base, byte[] list, boolean whilePresent) {
        ByteBuffer in = ByteBuffer.wrap(list);
        int calls = in.getShort() & 0xffff;
        byte[] value = base;
        for (int c = 0; c < calls && (value != null || !whilePresent); c++) {
            byte[] n = new byte[in.get() & 0xff];
            in.get(n);
            byte[] argument = new byte[in.getInt()];
            in.get(argument);
            String name = new String(n, StandardCharsets.UTF_8);
            if (!functions.knows(name)) {
                throw UpdateFunctions.unknown(name); // an environment opened without it: not the function's failure
            }
            try {
                value = functions.apply(name, key, value, argument);
            } catch (Exception | StackOverflowError | AssertionError | LinkageError e) {
                // Whatever the function's own code throws, a checked exception thrown sneakily
                // included; not a want of memory, which is the process's, not the call's.
                functions.failed(name, key, e);
            }
        }
        return value;
    }

    /** The function names {@code list} calls, in order, repeats included. */
    public static List<String> names(byte[] list) {
        ByteBuffer in = ByteBuffer.wrap(list);
        int calls = in.getShort() & 0xffff;
        List<String> names = new ArrayList<>(calls);
        for (int c = 0; c < calls; c++) {
            byte[] n = new byte[in.get() & 0xff];
            in.get(n);
            names.add(new String(n, StandardCharsets.UTF_8));
            int argument = in.getInt();
            in.position(in.position() + argument);
        }
        return names;
    }

    /**
     * Whether {@code bytes} are a well-formed list: at least one call, each name 1 to 255 bytes, each
     * length inside the array, nothing after the last call. For parsers of stored messages.
     */
    public static boolean wellFormed(ByteBuffer bytes, int off, int length) {
        if (length < 2) {
            return false;
        }
        int end = off + length;
        int calls = bytes.getShort(off) & 0xffff;
        int at = off + 2;
        for (int c = 0; c < calls; c++) {
            if (at + 1 > end) {
                return false;
            }
            int n = bytes.get(at) & 0xff;
            if (n == 0 || at + 1 + n + 4 > end) {
                return false;
            }
            int argument = bytes.getInt(at + 1 + n);
            at += 1 + n + 4;
            if (argument < 0 || argument > end - at) {
                return false;
            }
            at += argument;
        }
        return calls > 0 && at == end;
    }
}
