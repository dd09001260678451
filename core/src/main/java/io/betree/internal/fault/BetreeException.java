package io.betree.internal.fault;

/**
 * Root of the failures the engine's layers report: an engine or storage failure, as opposed to
 * misuse (which stays {@link IllegalArgumentException} or {@link IllegalStateException}). The API
 * turns it into its public twin {@code io.betree.internal.fault.BetreeException}, message and cause kept.
 */
public class BetreeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** A failure described by {@code message}. */
    public BetreeException(String message) {
        super(message);
    }

    /** A failure described by {@code message}, caused by {@code cause}. */
    public BetreeException(String message, Throwable cause) {
        super(message, cause);
    }
}
