package io.betree.internal.log;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Bounds-checked big-endian reads from a payload for the record codecs. Every read checks that the
 * bytes are there first and reports a shortfall as {@link IllegalArgumentException} naming the field,
 * so a malformed payload can never cause an out-of-bounds read or an oversized allocation.
 */
final class PayloadReader {

    private final ByteBuffer in;
    private final String what;

    /** Reads the remaining bytes of {@code payload} (not disturbing its position); {@code what} names it. */
    PayloadReader(ByteBuffer payload, String what) {
        this.in = payload.duplicate().order(ByteOrder.BIG_ENDIAN);
        this.what = what;
    }

    /** Reads a signed 32-bit integer. */
    int i32(String field) {
        need(4, field);
        return in.getInt();
    }

    /** Reads a signed 64-bit integer. */
    long i64(String field) {
        need(8, field);
        return in.getLong();
    }

    /** Reads one byte as a signed value. */
    byte i8(String field) {
        need(1, field);
        return in.get();
    }

    /** Reads one byte as an unsigned value. */
    int u8(String field) {
        return i8(field) & 0xff;
    }

    /** Reads two bytes as an unsigned value. */
    int u16(String field) {
        need(2, field);
        return in.getShort() & 0xffff;
    }

    /** Reads {@code length} bytes into a new array; the length is checked before allocating. */
    byte[] bytes(int length, String field) {
        if (length < 0) {
            throw malformed(field + " has negative length " + length);
        }
        need(length, field);
        byte[] out = new byte[length];
        in.get(out);
        return out;
    }

    /** Reads {@code length} bytes of strict UTF-8 (malformed sequences are rejected). */
    String utf8(int length, String field) {
        byte[] raw = bytes(length, field);
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw))
                    .toString();
        } catch (CharacterCodingException e) {
            throw malformed(field + " is not valid UTF-8");
        }
    }

    /**
     * Checks a count read from the payload: it must be non-negative and the remaining bytes must hold
     * at least {@code minBytesEach} bytes per element.
     */
    int count(int n, int minBytesEach, String field) {
        if (n < 0 || (long) n * minBytesEach > in.remaining()) {
            throw malformed("impossible " + field + " " + n + " with " + in.remaining() + " bytes left");
        }
        return n;
    }

    /** Checks that the payload has been consumed exactly. */
    void end() {
        if (in.hasRemaining()) {
            throw malformed(in.remaining() + " unexpected trailing bytes");
        }
    }

    private void need(int n, String field) {
        if (in.remaining() < n) {
            throw malformed("truncated at " + field + ": needs " + n + " bytes, " + in.remaining() + " left");
        }
    }

    private IllegalArgumentException malformed(String detail) {
        return new IllegalArgumentException("malformed " + what + " payload: " + detail);
    }
}
