package io.sluice.broker.partition;

/**
 * One exporter of a partition as its leader's director sees it: the position acknowledged so far (not yet
 * necessarily replicated), whether its sink is failing and is being retried, with the last error, and how many
 * attempts failed in this leadership term.
 */
public record ExporterStatus(
    String exporterId, String type, long acknowledgedPosition, boolean retrying, String lastError, long failures)
{
}
