package io.betree.internal.fault;

/**
 * A part of the engine refuses work because an earlier failure left its in-memory state unknown
 * (a write that stopped half-way, a failed log sync or checkpoint); reopening recovers.
 */
public class EnvironmentFailedException extends BetreeException {
    private static final long serialVersionUID = 1L;

    /** The message says what failed before; {@code cause} is that failure. */
    public EnvironmentFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
