package io.sluice.qa.cluster;

/** One target of a pause/resume answer: {@code outcome} is SUCCEEDED, FAILED or TIMED_OUT. */
public record PairOutcome(Pair pair, String outcome, String error)
{
}
