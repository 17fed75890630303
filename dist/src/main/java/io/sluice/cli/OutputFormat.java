package io.sluice.cli;

/** {@code --output}: a table for people, or the gateway's JSON answer for scripts. */
public enum OutputFormat
{
    table,
    json
}
