"""bisect"""
