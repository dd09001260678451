package io.betree.compression;

/** Thrown when compressed input is malformed; callers translate it into a corruption report. */
public final class CompressionFormatException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message naming the codec and the problem. */
    public CompressionFormatException(String message) {
        super(message);
    }

    /** Creates an exception wrapping the codec library's own error. */
    public CompressionFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
