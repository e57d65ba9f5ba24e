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


def company_to_switch_to(record, user, may_use):
    """The company of `record` when it is one of `user`'s companies that they are not working in now
    and `may_use(record)` would be true there; None otherwise (a company they are not allowed in
    says nothing: the record is not theirs to know of)."""
    record.ensure_one()
    # sudo: which company a record and a user belong to is read whatever the reader may see of them
    company = record.sudo().company_id
    if not company or company_allows(record, user) or company not in user.sudo().company_ids:
        return None
    return company if may_use(record.sudo().with_context(allowed_company_ids=company.ids)) else None


def linked_from_elsewhere(company, model, domain):
    """The records of `model` matching `domain` (the links to a record about to move to `company`)
    that are shared or of another company, archived ones too (restored, they would link it again).
    Read as superuser: whoever moves the record is told what it would break, whatever its company."""
    elsewhere = ["|", ("company_id", "=", False), ("company_id", "!=", company.id)]
    return company.env[model].sudo().with_context(active_test=False).search(domain + elsewhere)


def named_with_company(records) -> str:
    """Each of `records` with its company, as in "Name (Company), Other (every company)"."""
    env = records.env
    return ", ".join(
        f"{record.display_name} ({record.company_id.name or env._('every company')})" for record in records
    )
