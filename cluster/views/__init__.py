"""Pages: thin shells over selectors and services, one module per page family.

cluster/urls.py reaches every view through its module (``topics.topic_list``).
"""
