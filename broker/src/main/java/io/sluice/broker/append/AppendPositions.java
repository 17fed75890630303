package io.sluice.broker.append;

/**
 * What one client batch's append answers: the positions of its records, {@code firstPosition} to
 * {@code firstPosition + count - 1} (those first given, for a remembered idempotency id).
 */
public record AppendPositions(long firstPosition, int count)
{
}
