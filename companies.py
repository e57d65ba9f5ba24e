"""Companies as a boundary: whether a record of a company-aware model (its `company_id`, empty:
shared by every company) is open to a user.

Record rules keep a user's reads in their companies; the chat reads assistants, cloud services and
servers as superuser, so it asks the same question here."""

from __future__ import annotations


def allowed_companies(env, user):
    """The companies `user` works in: the current ones (the companies switched to) for the
    environment's own user, every company they are allowed otherwise."""
    return env.companies if user == env.user else user.sudo().company_ids


def company_allows(record, user=None) -> bool:
    """Whether `record` (one record with a `company_id`) is shared or of a company `user` (default:
    the environment's user) works in."""
    record.ensure_one()
    company = record.sudo().company_id
    user = user or record.env.user
    return not company or company in allowed_companies(record.env, user)
