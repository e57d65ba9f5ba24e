"""Catalogues of real-looking tools, served by the test MCP server (`--catalogue NAME`,
testing/mcp_servers.py) for the tool search's tests and benchmark (benchmarks/bench_tools.py).

Eight servers of 40 tools each, named and described as public MCP servers name and describe theirs:
excel (the tools of excel-mcp-server, PyPI, with their argument shapes), filesystem and git (the MCP
reference servers'), odoo (an ERP's records and business actions), github, tickets, drive and
database. Their schemas are shaped as MCPServer (FastMCP) writes them: a title per property, and a
description per argument where the server gives one. A call answers with its name and arguments.
"""

from __future__ import annotations

import json
from typing import Any

from mcp import types

# (name, description, arguments): an argument is (name, JSON type or a list of enum values,
# description, required)
Arg = tuple[str, Any, str, bool]
Spec = tuple[str, str, list[Arg]]

PATH = ("filepath", "string", "Path to the Excel file (.xlsx), absolute or relative to the excel files folder", True)
SHEET = ("sheet_name", "string", "Name of the worksheet", True)
START = ("start_cell", "string", "Top-left cell of the range, in A1 notation (e.g. 'A1')", True)
END = ("end_cell", "string", "Bottom-right cell of the range, in A1 notation; empty for a single cell", False)

EXCEL: list[Spec] = [
    (
        "apply_formula",
        "Apply Excel formula to cell. Checks the formula's syntax first.",
        [
            PATH,
            SHEET,
            ("cell", "string", "Target cell in A1 notation", True),
            ("formula", "string", "Formula, starting with '='", True),
        ],
    ),
    (
        "validate_formula_syntax",
        "Validate Excel formula syntax without applying it.",
        [
            PATH,
            SHEET,
            ("cell", "string", "Cell the formula is meant for", True),
            ("formula", "string", "Formula to check", True),
        ],
    ),
    (
        "format_range",
        "Apply formatting to a range of cells: font, colours, borders, number format, alignment, wrapping, merging, "
        "protection and conditional formatting.",
        [
            PATH,
            SHEET,
            START,
            END,
            ("bold", "boolean", "Bold font", False),
            ("italic", "boolean", "Italic font", False),
            ("underline", "boolean", "Underlined font", False),
            ("font_size", "integer", "Font size in points", False),
            ("font_color", "string", "Font colour as hex RGB (e.g. 'FF0000')", False),
            ("bg_color", "string", "Background fill colour as hex RGB", False),
            ("border_style", ["thin", "medium", "thick", "dashed", "dotted", "double"], "Border line style", False),
            ("border_color", "string", "Border colour as hex RGB", False),
            ("number_format", "string", "Excel number format code (e.g. '0.00%', 'yyyy-mm-dd')", False),
            ("alignment", ["left", "center", "right", "justify"], "Horizontal alignment", False),
            ("wrap_text", "boolean", "Wrap text within cells", False),
            ("merge_cells", "boolean", "Merge the range into one cell", False),
            ("protection", "object", "Cell protection: {'locked': bool, 'hidden': bool}", False),
            ("conditional_format", "object", "Conditional format rule: type, operator, formula and style", False),
        ],
    ),
    (
        "read_data_from_excel",
        "Read data from Excel worksheet with cell metadata including validation rules.",
        [
            PATH,
            SHEET,
            ("start_cell", "string", "Starting cell (default A1)", False),
            END,
            ("preview_only", "boolean", "Return only the first rows", False),
        ],
    ),
    (
        "write_data_to_excel",
        "Write data to Excel worksheet. Data is a list of rows, each row a list of values.",
        [
            PATH,
            SHEET,
            ("data", "array", "Rows of values to write, the first row may hold headers", True),
            ("start_cell", "string", "Cell to start writing at (default A1)", False),
        ],
    ),
    ("create_workbook", "Create new Excel workbook.", [PATH]),
    ("create_worksheet", "Create new worksheet in workbook.", [PATH, SHEET]),
    (
        "create_chart",
        "Create chart in worksheet from a data range.",
        [
            PATH,
            SHEET,
            ("data_range", "string", "Range holding the chart's data, e.g. 'A1:C10'", True),
            ("chart_type", ["line", "bar", "pie", "scatter", "area"], "Type of chart", True),
            ("target_cell", "string", "Cell where the chart's top-left corner goes", True),
            ("title", "string", "Chart title", False),
            ("x_axis", "string", "X axis label", False),
            ("y_axis", "string", "Y axis label", False),
        ],
    ),
    (
        "create_pivot_table",
        "Create pivot table in worksheet summarising a data range.",
        [
            PATH,
            SHEET,
            ("data_range", "string", "Source data range with headers", True),
            ("rows", "array", "Fields for row labels", True),
            ("values", "array", "Fields to aggregate", True),
            ("columns", "array", "Fields for column labels", False),
            ("agg_func", ["sum", "count", "average", "min", "max"], "Aggregation function", False),
        ],
    ),
    (
        "create_table",
        "Creates a native Excel table from a specified range of data.",
        [
            PATH,
            SHEET,
            ("data_range", "string", "Range of the table, headers included", True),
            ("table_name", "string", "Unique table name", False),
            ("table_style", "string", "Table style, e.g. 'TableStyleMedium9'", False),
        ],
    ),
    (
        "copy_worksheet",
        "Copy worksheet within workbook.",
        [PATH, ("source_sheet", "string", "Sheet to copy", True), ("target_sheet", "string", "Name of the copy", True)],
    ),
    ("delete_worksheet", "Delete worksheet from workbook.", [PATH, SHEET]),
    (
        "rename_worksheet",
        "Rename worksheet in workbook.",
        [PATH, ("old_name", "string", "Current sheet name", True), ("new_name", "string", "New sheet name", True)],
    ),
    (
        "get_workbook_metadata",
        "Get metadata about workbook including sheets, ranges, etc.",
        [PATH, ("include_ranges", "boolean", "Include each sheet's used range", False)],
    ),
    (
        "merge_cells",
        "Merge a range of cells.",
        [PATH, SHEET, START, ("end_cell", "string", "Bottom-right cell of the range", True)],
    ),
    (
        "unmerge_cells",
        "Unmerge a range of cells.",
        [PATH, SHEET, START, ("end_cell", "string", "Bottom-right cell of the range", True)],
    ),
    ("get_merged_cells", "Get merged cells in a worksheet.", [PATH, SHEET]),
    (
        "copy_range",
        "Copy a range of cells to another location.",
        [
            PATH,
            SHEET,
            ("source_start", "string", "First cell of the source range", True),
            ("source_end", "string", "Last cell of the source range", True),
            ("target_start", "string", "First cell of the destination", True),
            ("target_sheet", "string", "Destination sheet (default: the same)", False),
        ],
    ),
    (
        "delete_range",
        "Delete a range of cells and shift remaining cells.",
        [
            PATH,
            SHEET,
            START,
            ("end_cell", "string", "Last cell of the range", True),
            ("shift_direction", ["up", "left"], "Where the remaining cells move", False),
        ],
    ),
    ("validate_excel_range", "Validate if a range exists and is properly formatted.", [PATH, SHEET, START, END]),
    (
        "get_data_validation_info",
        "Get all data validation rules in a worksheet: allowed values, ranges and the cells they apply to.",
        [PATH, SHEET],
    ),
    (
        "insert_rows",
        "Insert one or more rows starting at the specified row.",
        [
            PATH,
            SHEET,
            ("start_row", "integer", "Row number before which rows are inserted", True),
            ("count", "integer", "How many rows", False),
        ],
    ),
    (
        "insert_columns",
        "Insert one or more columns starting at the specified column.",
        [
            PATH,
            SHEET,
            ("start_col", "integer", "Column number before which columns are inserted", True),
            ("count", "integer", "How many columns", False),
        ],
    ),
    (
        "delete_sheet_rows",
        "Delete one or more rows starting at the specified row.",
        [
            PATH,
            SHEET,
            ("start_row", "integer", "First row to delete", True),
            ("count", "integer", "How many rows", False),
        ],
    ),
    (
        "delete_sheet_columns",
        "Delete one or more columns starting at the specified column.",
        [
            PATH,
            SHEET,
            ("start_col", "integer", "First column to delete", True),
            ("count", "integer", "How many columns", False),
        ],
    ),
    (
        "set_column_width",
        "Set the width of one or more worksheet columns.",
        [
            PATH,
            SHEET,
            ("columns", "string", "Column letters, e.g. 'A:C'", True),
            ("width", "number", "Width in characters", True),
        ],
    ),
    (
        "set_row_height",
        "Set the height of one or more worksheet rows.",
        [
            PATH,
            SHEET,
            ("rows", "string", "Row numbers, e.g. '1:3'", True),
            ("height", "number", "Height in points", True),
        ],
    ),
    (
        "freeze_panes",
        "Freeze rows and columns above and left of a cell so they stay visible while scrolling.",
        [PATH, SHEET, ("cell", "string", "First cell that scrolls", True)],
    ),
    (
        "add_comment",
        "Add a comment (note) to a cell.",
        [
            PATH,
            SHEET,
            ("cell", "string", "Cell to annotate", True),
            ("text", "string", "Comment text", True),
            ("author", "string", "Comment author", False),
        ],
    ),
    (
        "find_and_replace",
        "Find text or values in a worksheet and replace them.",
        [
            PATH,
            SHEET,
            ("find", "string", "Text to look for", True),
            ("replace", "string", "Replacement text", True),
            ("match_case", "boolean", "Case-sensitive match", False),
        ],
    ),
    (
        "sort_range",
        "Sort the rows of a range by one or more columns.",
        [
            PATH,
            SHEET,
            ("data_range", "string", "Range to sort", True),
            ("sort_by", "array", "Columns to sort by, with 'asc' or 'desc'", True),
            ("has_header", "boolean", "The first row holds headers", False),
        ],
    ),
    (
        "apply_autofilter",
        "Add an autofilter to a range so its rows can be filtered by column values.",
        [
            PATH,
            SHEET,
            ("data_range", "string", "Range with headers", True),
            ("criteria", "object", "Column filters", False),
        ],
    ),
    (
        "add_conditional_formatting",
        "Add a conditional formatting rule (colour scale, data bar, icon set or formula) to a range.",
        [
            PATH,
            SHEET,
            ("data_range", "string", "Range to format", True),
            ("rule", "object", "Rule type and options", True),
        ],
    ),
    (
        "protect_sheet",
        "Protect a worksheet with an optional password so its locked cells cannot be edited.",
        [PATH, SHEET, ("password", "string", "Password", False)],
    ),
    (
        "unprotect_sheet",
        "Remove the protection of a worksheet.",
        [PATH, SHEET, ("password", "string", "Password", False)],
    ),
    ("hide_sheet", "Hide or unhide a worksheet.", [PATH, SHEET, ("hidden", "boolean", "Hide it", True)]),
    (
        "export_sheet_to_csv",
        "Export a worksheet to a CSV file.",
        [
            PATH,
            SHEET,
            ("csv_path", "string", "Where to write the CSV", True),
            ("delimiter", "string", "Field delimiter", False),
        ],
    ),
    (
        "import_csv_to_sheet",
        "Import a CSV file into a worksheet.",
        [
            PATH,
            SHEET,
            ("csv_path", "string", "CSV file to read", True),
            ("delimiter", "string", "Field delimiter", False),
        ],
    ),
    (
        "add_hyperlink",
        "Insert a hyperlink into a cell.",
        [
            PATH,
            SHEET,
            ("cell", "string", "Cell", True),
            ("url", "string", "Link target", True),
            ("display_text", "string", "Text shown", False),
        ],
    ),
    (
        "insert_image",
        "Insert an image into a worksheet at a cell.",
        [PATH, SHEET, ("image_path", "string", "Image file", True), ("cell", "string", "Anchor cell", True)],
    ),
]

FILE_PATH = ("path", "string", "Path of the file, within the allowed directories", True)
FILESYSTEM: list[Spec] = [
    (
        "read_text_file",
        "Read the complete contents of a file from the file system as text. Handles various text encodings and "
        "provides detailed error messages if the file cannot be read. Use 'head' or 'tail' to read only the first or "
        "last lines.",
        [
            FILE_PATH,
            ("head", "integer", "Only the first N lines", False),
            ("tail", "integer", "Only the last N lines", False),
        ],
    ),
    ("read_media_file", "Read an image or audio file. Returns the base64 encoded data and MIME type.", [FILE_PATH]),
    (
        "read_multiple_files",
        "Read the contents of multiple files simultaneously. More efficient than reading files one by one when you "
        "need to analyze or compare multiple files.",
        [("paths", "array", "Paths of the files", True)],
    ),
    (
        "write_file",
        "Create a new file or completely overwrite an existing file with new content. Use with caution as it will "
        "overwrite existing files without warning.",
        [FILE_PATH, ("content", "string", "Content to write", True)],
    ),
    (
        "edit_file",
        "Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a "
        "git-style diff showing the changes made.",
        [
            FILE_PATH,
            ("edits", "array", "Edits: oldText and newText", True),
            ("dryRun", "boolean", "Preview changes using git-style diff format", False),
        ],
    ),
    (
        "create_directory",
        "Create a new directory or ensure a directory exists. Can create multiple nested directories in one operation.",
        [FILE_PATH],
    ),
    (
        "list_directory",
        "Get a detailed listing of all files and directories in a specified path. Results clearly distinguish "
        "between files and directories with [FILE] and [DIR] prefixes.",
        [FILE_PATH],
    ),
    (
        "list_directory_with_sizes",
        "Get a detailed listing of all files and directories in a specified path, including sizes.",
        [FILE_PATH, ("sortBy", ["name", "size"], "Sort entries by name or size", False)],
    ),
    (
        "directory_tree",
        "Get a recursive tree view of files and directories as a JSON structure.",
        [FILE_PATH, ("excludePatterns", "array", "Glob patterns to leave out", False)],
    ),
    (
        "move_file",
        "Move or rename files and directories. Can move files between directories and rename them in a single "
        "operation. If the destination exists, the operation will fail.",
        [("source", "string", "Current path", True), ("destination", "string", "New path", True)],
    ),
    (
        "search_files",
        "Recursively search for files and directories matching a pattern. Searches through all subdirectories from "
        "the starting path.",
        [
            FILE_PATH,
            ("pattern", "string", "Glob pattern to match", True),
            ("excludePatterns", "array", "Glob patterns to leave out", False),
        ],
    ),
    (
        "get_file_info",
        "Retrieve detailed metadata about a file or directory: size, creation time, last modified time, permissions "
        "and type.",
        [FILE_PATH],
    ),
    ("list_allowed_directories", "Returns the list of directories that this server is allowed to access.", []),
]
for _name, _what in [
    ("copy_file", "Copy a file or directory to a new location, keeping the original."),
    ("delete_file", "Delete a file. Directories must be empty unless recursive is set."),
    ("compress_files", "Compress files or a directory into a zip archive."),
    ("extract_archive", "Extract a zip or tar archive into a directory."),
    ("file_checksum", "Compute the SHA-256 checksum of a file to verify its integrity."),
    ("watch_directory", "Watch a directory and report files created, modified or deleted since the last call."),
    ("change_permissions", "Change the permissions of a file or directory."),
    ("create_symlink", "Create a symbolic link pointing to a file or directory."),
    ("touch_file", "Create an empty file or update a file's modification time."),
    ("append_to_file", "Append text to the end of a file without rewriting it."),
    ("grep_files", "Search the contents of files for lines matching a regular expression."),
    ("diff_files", "Compare two text files line by line and return a unified diff."),
    ("tail_log", "Return the lines appended to a log file since the last call."),
    ("disk_usage", "Report the disk space used by a directory and its largest files."),
    ("find_duplicates", "Find files with identical content under a directory."),
    ("convert_encoding", "Convert a text file from one character encoding to another."),
    ("count_lines", "Count the lines, words and characters of text files."),
    ("replace_in_files", "Replace text in every file matching a pattern under a directory."),
    ("split_file", "Split a large file into parts of a given size."),
    ("merge_files", "Concatenate several files into one."),
    ("lock_file", "Take an advisory lock on a file so other writers wait."),
    ("unlock_file", "Release an advisory lock taken on a file."),
    ("move_to_trash", "Move a file to the trash instead of deleting it."),
    ("restore_from_trash", "Restore a file from the trash to where it was."),
    ("empty_trash", "Permanently delete everything in the trash."),
    ("detect_file_type", "Detect a file's type from its content (magic numbers), whatever its extension."),
    ("hash_directory", "Compute one checksum over a directory's files, to tell whether anything changed."),
]:
    FILESYSTEM.append((_name, _what, [FILE_PATH]))

REPO = ("repo_path", "string", "Path to the Git repository", True)
GIT: list[Spec] = [
    ("git_status", "Shows the working tree status.", [REPO]),
    (
        "git_diff_unstaged",
        "Shows changes in the working directory that are not yet staged.",
        [REPO, ("context_lines", "integer", "Lines of context", False)],
    ),
    (
        "git_diff_staged",
        "Shows changes that are staged for commit.",
        [REPO, ("context_lines", "integer", "Lines of context", False)],
    ),
    (
        "git_diff",
        "Shows differences between branches or commits.",
        [REPO, ("target", "string", "Branch or commit to compare with", True)],
    ),
    ("git_commit", "Records changes to the repository.", [REPO, ("message", "string", "Commit message", True)]),
    ("git_add", "Adds file contents to the staging area.", [REPO, ("files", "array", "Files to stage", True)]),
    ("git_reset", "Unstages all staged changes.", [REPO]),
    (
        "git_log",
        "Shows the commit logs.",
        [
            REPO,
            ("max_count", "integer", "Most commits to show", False),
            ("start_timestamp", "string", "Only commits after this date", False),
            ("end_timestamp", "string", "Only commits before this date", False),
        ],
    ),
    (
        "git_create_branch",
        "Creates a new branch from an optional base branch.",
        [
            REPO,
            ("branch_name", "string", "Name of the new branch", True),
            ("base_branch", "string", "Starting point", False),
        ],
    ),
    ("git_checkout", "Switches branches.", [REPO, ("branch_name", "string", "Branch to switch to", True)]),
    ("git_show", "Shows the contents of a commit.", [REPO, ("revision", "string", "Commit, tag or branch", True)]),
    (
        "git_branch",
        "List Git branches.",
        [
            REPO,
            ("branch_type", ["local", "remote", "all"], "Which branches", True),
            ("contains", "string", "Only branches containing this commit", False),
        ],
    ),
]
for _name, _what in [
    ("git_init", "Create an empty Git repository or reinitialize an existing one."),
    ("git_clone", "Clone a repository into a new directory."),
    ("git_fetch", "Download objects and refs from another repository."),
    ("git_pull", "Fetch from and integrate with another repository or a local branch."),
    ("git_push", "Update remote refs along with associated objects."),
    ("git_merge", "Join two or more development histories together."),
    ("git_rebase", "Reapply commits on top of another base tip."),
    ("git_cherry_pick", "Apply the changes introduced by some existing commits."),
    ("git_revert", "Revert some existing commits by recording new commits."),
    ("git_stash", "Stash the changes in a dirty working directory away."),
    ("git_stash_pop", "Apply the most recently stashed changes and remove them from the stash."),
    ("git_tag", "Create, list or delete a tag object signed with GPG."),
    ("git_blame", "Show what revision and author last modified each line of a file."),
    ("git_remote", "Manage the set of tracked repositories."),
    ("git_delete_branch", "Delete a local branch that has been merged."),
    ("git_rename_branch", "Rename a branch."),
    ("git_restore", "Restore working tree files from the index or a commit."),
    ("git_clean", "Remove untracked files from the working tree."),
    ("git_reflog", "Show the reference log: where branch tips have been."),
    ("git_shortlog", "Summarize the log output by author."),
    ("git_describe", "Give an object a human readable name based on the nearest tag."),
    ("git_bisect", "Use binary search to find the commit that introduced a bug."),
    ("git_worktree", "Manage multiple working trees attached to the same repository."),
    ("git_submodule", "Initialize, update or inspect submodules."),
    ("git_config", "Get and set repository or global options."),
    ("git_ls_files", "Show information about files in the index and the working tree."),
    ("git_grep", "Print lines in tracked files matching a pattern."),
    ("git_archive", "Create an archive of files from a named tree."),
]:
    GIT.append((_name, _what, [REPO]))

MODEL = ("model", "string", "Technical name of the Odoo model, e.g. 'res.partner'", True)
IDS = ("ids", "array", "Record ids", True)
ODOO: list[Spec] = [
    (
        "search_read",
        "Search records of any model with a domain and read the given fields.",
        [
            MODEL,
            ("domain", "array", "Search domain, e.g. [['state', '=', 'posted']]", False),
            ("fields", "array", "Fields to read", False),
            ("limit", "integer", "Most records", False),
            ("order", "string", "Sort order", False),
        ],
    ),
    ("read_records", "Read fields of records by id.", [MODEL, IDS, ("fields", "array", "Fields to read", False)]),
    (
        "create_record",
        "Create a record of any model with the given values.",
        [MODEL, ("values", "object", "Field values", True)],
    ),
    ("write_records", "Update fields of records by id.", [MODEL, IDS, ("values", "object", "Field values", True)]),
    ("unlink_records", "Delete records by id.", [MODEL, IDS]),
    ("fields_get", "Describe the fields of a model: type, label, relation and whether required.", [MODEL]),
    (
        "count_records",
        "Count the records of a model matching a domain.",
        [MODEL, ("domain", "array", "Search domain", False)],
    ),
    (
        "read_group",
        "Group records and aggregate fields, as a pivot view does.",
        [
            MODEL,
            ("domain", "array", "Search domain", False),
            ("groupby", "array", "Fields to group by", True),
            ("fields", "array", "Aggregates", True),
        ],
    ),
    (
        "create_invoice",
        "Create a draft customer invoice for a partner with invoice lines (product, quantity, price).",
        [
            ("partner_id", "integer", "Customer", True),
            ("lines", "array", "Invoice lines", True),
            ("invoice_date", "string", "Invoice date", False),
        ],
    ),
    (
        "post_invoice",
        "Confirm (post) a draft invoice so it gets its number and becomes due.",
        [("invoice_id", "integer", "Invoice", True)],
    ),
    (
        "register_payment",
        "Register a payment against a posted invoice.",
        [
            ("invoice_id", "integer", "Invoice", True),
            ("amount", "number", "Amount paid", True),
            ("journal_id", "integer", "Bank or cash journal", False),
            ("payment_date", "string", "Payment date", False),
        ],
    ),
    (
        "send_invoice_email",
        "Send a posted invoice to its customer by email with the PDF attached.",
        [("invoice_id", "integer", "Invoice", True)],
    ),
    (
        "create_credit_note",
        "Reverse a posted invoice with a credit note.",
        [("invoice_id", "integer", "Invoice", True), ("reason", "string", "Reason", False)],
    ),
    (
        "list_overdue_invoices",
        "List customer invoices past their due date with the amount still due.",
        [("partner_id", "integer", "Only this customer", False)],
    ),
    (
        "create_sale_order",
        "Create a quotation for a customer with order lines.",
        [("partner_id", "integer", "Customer", True), ("lines", "array", "Order lines", True)],
    ),
    (
        "confirm_sale_order",
        "Confirm a quotation into a sales order, reserving the products.",
        [("order_id", "integer", "Quotation", True)],
    ),
    ("cancel_sale_order", "Cancel a quotation or sales order.", [("order_id", "integer", "Order", True)]),
    (
        "create_purchase_order",
        "Create a request for quotation to a vendor.",
        [("partner_id", "integer", "Vendor", True), ("lines", "array", "Order lines", True)],
    ),
    (
        "confirm_purchase_order",
        "Confirm a request for quotation into a purchase order.",
        [("order_id", "integer", "RFQ", True)],
    ),
    (
        "validate_picking",
        "Validate a stock transfer (receipt or delivery), moving the quantities done.",
        [("picking_id", "integer", "Transfer", True)],
    ),
    (
        "check_product_availability",
        "Quantity on hand and forecast of products per warehouse.",
        [("product_ids", "array", "Products", True), ("warehouse_id", "integer", "Warehouse", False)],
    ),
    (
        "create_partner",
        "Create a contact (company or person) with address, email and phone.",
        [
            ("name", "string", "Name", True),
            ("email", "string", "Email", False),
            ("phone", "string", "Phone", False),
            ("is_company", "boolean", "A company", False),
        ],
    ),
    (
        "find_partner",
        "Find contacts by name, email, phone or VAT number.",
        [("query", "string", "What to look for", True)],
    ),
    (
        "create_lead",
        "Create a CRM lead or opportunity.",
        [
            ("name", "string", "Title", True),
            ("partner_id", "integer", "Customer", False),
            ("expected_revenue", "number", "Expected revenue", False),
        ],
    ),
    ("mark_lead_won", "Mark an opportunity as won.", [("lead_id", "integer", "Opportunity", True)]),
    (
        "create_task",
        "Create a project task with assignees and a deadline.",
        [
            ("project_id", "integer", "Project", True),
            ("name", "string", "Title", True),
            ("user_ids", "array", "Assignees", False),
            ("date_deadline", "string", "Deadline", False),
        ],
    ),
    (
        "log_timesheet",
        "Log hours spent on a task in a timesheet.",
        [
            ("task_id", "integer", "Task", True),
            ("hours", "number", "Hours", True),
            ("description", "string", "What was done", False),
        ],
    ),
    (
        "create_expense",
        "Create an employee expense with its amount and receipt.",
        [
            ("employee_id", "integer", "Employee", True),
            ("name", "string", "Description", True),
            ("total_amount", "number", "Amount", True),
        ],
    ),
    ("approve_leave", "Approve an employee's time off request.", [("leave_id", "integer", "Time off request", True)]),
    (
        "create_leave_request",
        "Request time off for an employee between two dates.",
        [
            ("employee_id", "integer", "Employee", True),
            ("date_from", "string", "First day", True),
            ("date_to", "string", "Last day", True),
        ],
    ),
    (
        "list_employees",
        "List employees with their department, job and manager.",
        [("department_id", "integer", "Only this department", False)],
    ),
    (
        "create_calendar_event",
        "Schedule a meeting in the calendar with attendees.",
        [
            ("name", "string", "Subject", True),
            ("start", "string", "Start", True),
            ("stop", "string", "End", True),
            ("partner_ids", "array", "Attendees", False),
        ],
    ),
    (
        "post_message",
        "Post a message in a record's chatter, optionally notifying followers.",
        [MODEL, ("res_id", "integer", "Record", True), ("body", "string", "Message", True)],
    ),
    (
        "schedule_activity",
        "Schedule an activity (call, email, to-do) on a record for a user.",
        [
            MODEL,
            ("res_id", "integer", "Record", True),
            ("summary", "string", "Summary", True),
            ("date_deadline", "string", "Due date", False),
        ],
    ),
    (
        "get_balance_sheet",
        "Balance sheet report at a date: assets, liabilities and equity.",
        [("date", "string", "Date", False)],
    ),
    (
        "get_profit_and_loss",
        "Profit and loss report between two dates.",
        [("date_from", "string", "From", True), ("date_to", "string", "To", True)],
    ),
    (
        "reconcile_bank_statement",
        "Match bank statement lines with invoices and payments.",
        [("statement_id", "integer", "Statement", True)],
    ),
    (
        "create_product",
        "Create a product with its price, cost and category.",
        [
            ("name", "string", "Name", True),
            ("list_price", "number", "Sales price", False),
            ("categ_id", "integer", "Category", False),
        ],
    ),
    (
        "update_product_price",
        "Change a product's sales price or a pricelist's price for it.",
        [
            ("product_id", "integer", "Product", True),
            ("price", "number", "New price", True),
            ("pricelist_id", "integer", "Pricelist", False),
        ],
    ),
    (
        "print_report",
        "Render a record's report (invoice, delivery slip, quotation) as PDF.",
        [("report", "string", "Report name", True), IDS],
    ),
]

GITHUB = [
    ("create_issue", "Create a new issue in a GitHub repository."),
    ("list_issues", "List issues in a GitHub repository with filtering options."),
    ("update_issue", "Update an existing issue in a GitHub repository."),
    ("add_issue_comment", "Add a comment to an existing issue."),
    ("search_issues", "Search for issues and pull requests across GitHub repositories."),
    ("create_pull_request", "Create a new pull request in a GitHub repository."),
    ("list_pull_requests", "List and filter repository pull requests."),
    ("merge_pull_request", "Merge a pull request."),
    ("get_pull_request_diff", "Get the diff of a pull request."),
    ("create_pull_request_review", "Create a review on a pull request: approve, request changes or comment."),
    ("get_pull_request_status", "Get the combined status of all status checks for a pull request."),
    ("request_copilot_review", "Request a Copilot review for a pull request."),
    ("create_repository", "Create a new GitHub repository in your account."),
    ("fork_repository", "Fork a GitHub repository to your account or an organization."),
    ("search_repositories", "Search for GitHub repositories."),
    ("get_file_contents", "Get the contents of a file or directory from a GitHub repository."),
    ("create_or_update_file", "Create or update a single file in a GitHub repository."),
    ("push_files", "Push multiple files to a GitHub repository in a single commit."),
    ("delete_file", "Delete a file from a GitHub repository."),
    ("create_branch", "Create a new branch in a GitHub repository."),
    ("list_branches", "List branches in a GitHub repository."),
    ("list_commits", "Get list of commits of a branch in a GitHub repository."),
    ("get_commit", "Get details for a commit from a GitHub repository."),
    ("search_code", "Search for code across GitHub repositories."),
    ("search_users", "Search for GitHub users."),
    ("list_tags", "List git tags in a GitHub repository."),
    ("list_releases", "List releases in a GitHub repository."),
    ("create_release", "Create a release from a tag with release notes."),
    ("list_workflow_runs", "List GitHub Actions workflow runs of a repository."),
    ("rerun_workflow_run", "Re-run a failed GitHub Actions workflow run."),
    ("get_job_logs", "Download the logs of a GitHub Actions job."),
    ("list_notifications", "List notifications for the authenticated user."),
    ("dismiss_notification", "Mark a notification as read or done."),
    ("list_code_scanning_alerts", "List code scanning alerts in a repository."),
    ("list_secret_scanning_alerts", "List secret scanning alerts in a repository."),
    ("list_dependabot_alerts", "List Dependabot alerts of vulnerable dependencies in a repository."),
    ("create_gist", "Create a new gist."),
    ("star_repository", "Star a GitHub repository."),
    ("list_discussions", "List discussions of a repository."),
    ("get_me", "Get details of the authenticated GitHub user."),
]
GITHUB_ARGS: list[Arg] = [
    ("owner", "string", "Repository owner (user or organization)", True),
    ("repo", "string", "Repository name", True),
    ("body", "string", "Text, in GitHub Markdown", False),
    ("page", "integer", "Page number for pagination (min 1)", False),
    ("perPage", "integer", "Results per page (min 1, max 100)", False),
]

TICKET_ENTITIES = ["ticket", "comment", "sprint", "board", "project", "label", "worklog", "attachment"]
TICKET_VERBS = {
    "create": "Create a {e} in the ticket system (Jira-like) with its fields.",
    "get": "Get one {e} by key or id, with all its fields.",
    "search": "Search {e}s with a JQL-like query and return matching ones.",
    "update": "Update the fields of an existing {e}.",
    "delete": "Delete a {e}; this cannot be undone.",
}
DRIVE_ENTITIES = ["file", "folder", "permission", "revision", "shared_drive", "comment", "spreadsheet", "document"]
DRIVE_VERBS = {
    "upload": "Upload a {e} to the cloud drive (Google Drive-like).",
    "download": "Download a {e} from the cloud drive, exporting Google formats to Office ones.",
    "list": "List the {e}s in the cloud drive matching a query.",
    "share": "Share a {e} with users, groups or anyone with the link.",
    "trash": "Move a {e} of the cloud drive to the trash.",
}
DATABASE: list[tuple[str, str]] = [
    ("query", "Run a read-only SQL query against the PostgreSQL database and return the rows."),
    ("execute_sql", "Execute a SQL statement that changes data (INSERT, UPDATE, DELETE) in a transaction."),
    ("list_schemas", "List the schemas of the database."),
    ("list_tables", "List the tables of a schema with their row estimates."),
    ("describe_table", "Describe a table: columns, types, defaults, constraints and indexes."),
    ("list_indexes", "List the indexes of a table with their definitions and sizes."),
    ("explain_query", "Show the execution plan of a query (EXPLAIN ANALYZE)."),
    ("get_top_queries", "Report the slowest queries from pg_stat_statements."),
    ("analyze_db_health", "Check the database's health: bloat, vacuum, replication lag, connections."),
    ("recommend_indexes", "Recommend indexes for a workload of queries."),
    ("list_views", "List the views of a schema with their definitions."),
    ("list_functions", "List stored functions and procedures."),
    ("list_extensions", "List installed extensions and their versions."),
    ("list_roles", "List database roles and their privileges."),
    ("grant_privilege", "Grant a privilege on a table to a role."),
    ("revoke_privilege", "Revoke a privilege on a table from a role."),
    ("create_table", "Create a table with columns and a primary key."),
    ("alter_table", "Add, drop or change columns of a table."),
    ("drop_table", "Drop a table and everything that depends on it."),
    ("create_index", "Create an index on columns of a table, concurrently."),
    ("drop_index", "Drop an index."),
    ("vacuum_table", "Vacuum and analyze a table to reclaim space and refresh statistics."),
    ("table_size", "Size of a table, its indexes and TOAST data on disk."),
    ("list_locks", "List locks held and awaited, with the blocking queries."),
    ("cancel_backend", "Cancel the running query of a backend process."),
    ("terminate_backend", "Terminate a backend process and its connection."),
    ("list_connections", "List open connections with their state and query."),
    ("backup_database", "Dump the database to a file with pg_dump."),
    ("restore_database", "Restore a database dump."),
    ("export_query_csv", "Run a query and export the result as CSV."),
    ("import_csv_table", "Import a CSV file into a table with COPY."),
    ("list_foreign_keys", "List the foreign keys between tables."),
    ("sample_rows", "Return a random sample of a table's rows."),
    ("column_statistics", "Distinct values, nulls and most common values of a column."),
    ("list_sequences", "List sequences and their current values."),
    ("reset_sequence", "Set a sequence to the maximum id of its table."),
    ("list_triggers", "List the triggers of a table."),
    ("list_partitions", "List the partitions of a partitioned table."),
    ("replication_status", "Status of replication slots and standbys."),
    ("database_size", "Size of each database on the server."),
]
DATABASE_ARGS: list[Arg] = [
    ("sql", "string", "SQL text", False),
    ("schema", "string", "Schema name (default public)", False),
    ("table", "string", "Table name", False),
]


def _catalogue() -> dict[str, list[Spec]]:
    github = [(name, what, GITHUB_ARGS) for name, what in GITHUB]
    tickets = [
        (
            f"{verb}_{entity}",
            text.format(e=entity),
            [
                ("key", "string", f"The {entity}'s key or id", verb != "create"),
                ("fields", "object", "Field values", False),
            ],
        )
        for entity in TICKET_ENTITIES
        for verb, text in TICKET_VERBS.items()
    ]
    drive = [
        (
            f"{verb}_{entity}",
            text.format(e=entity.replace("_", " ")),
            [
                ("file_id", "string", "The item's id", verb != "upload"),
                ("query", "string", "Search query", False),
                ("email", "string", "Who to share with", False),
            ],
        )
        for entity in DRIVE_ENTITIES
        for verb, text in DRIVE_VERBS.items()
    ]
    database = [(name, what, DATABASE_ARGS) for name, what in DATABASE]
    return {
        "excel": EXCEL,
        "filesystem": FILESYSTEM,
        "git": GIT,
        "odoo": ODOO,
        "github": github,
        "tickets": tickets,
        "drive": drive,
        "database": database,
    }


CATALOGUES = tuple(_catalogue())


def catalogue_tools(name: str) -> list[types.Tool]:
    """The MCP tools of catalogue `name`, in order."""
    return [
        types.Tool(name=tool, title=tool.replace("_", " ").capitalize(), description=what, inputSchema=_schema(args))
        for tool, what, args in _catalogue()[name]
    ]


def _schema(args: list[Arg]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, kind, description, _required in args:
        prop: dict[str, Any] = {"title": name.replace("_", " ").title(), "description": description}
        if isinstance(kind, list):
            prop.update(type="string", enum=kind)
        elif kind == "array":
            prop.update(type="array", items={"type": "string"})
        else:
            prop["type"] = kind
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name, _kind, _description, needed in args if needed]
    if required:
        schema["required"] = required
    return schema


def serve_catalogue(mcp: Any, name: str) -> None:
    """Make the MCPServer `mcp` (mcp 2.x) list the tools of catalogue `name` instead of its own, and
    answer a call of one with its name and arguments."""
    tools = catalogue_tools(name)
    names = {tool.name for tool in tools}

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in names:
            return types.CallToolResult(content=[types.TextContent(text=f"Unknown tool: {params.name}")], is_error=True)
        arguments = json.dumps(params.arguments or {}, sort_keys=True)
        return types.CallToolResult(content=[types.TextContent(text=f"{params.name} done with {arguments}")])

    mcp._lowlevel_server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
    mcp._lowlevel_server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
