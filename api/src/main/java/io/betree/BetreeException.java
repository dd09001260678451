package io.betree;

/**
 * Root of every exception betree throws for a failure of the engine or its storage. Unchecked, so
 * that the common path stays free of {@code try} blocks; catch it where a failure can be handled.
 * Misuse of the API (null or oversized arguments, use after close) is reported with the standard
 * {@link NullPointerException}, {@link IllegalArgumentException} and {@link IllegalStateException}.
 */
public class BetreeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message that names the problem. */
    public BetreeException(String message) {
        super(message);
    }

    /** Creates an exception with a message and the underlying cause. */
    public BetreeException(String message, Throwable cause) {
        super(message, cause);
    }
}
